//! Reading a whole collection in `_id` order, one batch at a time: what the verify/repair
//! sweeps share, so that their memory holds one batch whatever the collection's size.

use bson::{doc, Document};
use futures_util::TryStreamExt;
use mongodb::Cursor;

use crate::progress::{Task, Tracker, Unit};
use crate::{Error, Odm, Result};

/// The documents of a collection (only the projected fields), in `_id` order, in batches of
/// `size`. One `find`, plus `getMore`s; when the handle [observes
/// progress](crate::Odm::with_progress), one `count` before them for the total (from the
/// collection's metadata when the sweep reads it all), and a report per batch.
pub(crate) struct Batches<'c> {
    collection: &'c str,
    cursor: Cursor<Document>,
    size: usize,
    tracker: Tracker,
}

/// What a sweep reports its reading as: the task and the piece, for people.
pub(crate) struct Work<P: FnOnce() -> String> {
    pub(crate) task: Task,
    pub(crate) phase: P,
}

impl<P: FnOnce() -> String> Work<P> {
    pub(crate) fn of(repair: bool, phase: P) -> Self {
        Work {
            task: if repair { Task::Repair } else { Task::Verify },
            phase,
        }
    }
}

impl<'c> Batches<'c> {
    pub(crate) async fn open(
        odm: &Odm,
        collection: &'c str,
        projection: Document,
        size: usize,
        work: Work<impl FnOnce() -> String>,
    ) -> Result<Batches<'c>> {
        Batches::matching(odm, collection, doc! {}, projection, size, work).await
    }

    /// The documents matching `filter` (a kind's, say), likewise.
    pub(crate) async fn matching(
        odm: &Odm,
        collection: &'c str,
        filter: Document,
        projection: Document,
        size: usize,
        work: Work<impl FnOnce() -> String>,
    ) -> Result<Batches<'c>> {
        let coll = odm.own_database().collection::<Document>(collection);
        // The total, for the progress reports only: the collection's count from its metadata
        // when the sweep reads all of it (no scan), the matching documents' otherwise.
        let total = match odm.progress() {
            Some(_) if filter.is_empty() => Some(coll.estimated_document_count().await),
            Some(_) => Some(coll.count_documents(filter.clone()).await),
            None => None,
        };
        let total = total
            .transpose()
            .map_err(|e| Error::from_driver(collection, e))?;
        let tracker = odm.track(work.task, Unit::Documents, work.phase, total);
        let cursor = coll
            .find(filter)
            .projection(projection)
            .sort(doc! { "_id": 1 })
            .batch_size(u32::try_from(size).unwrap_or(u32::MAX))
            .await
            .map_err(|e| Error::from_driver(collection, e))?;
        Ok(Batches {
            collection,
            cursor,
            size,
            tracker,
        })
    }

    /// The next batch, or `None` once the collection is read.
    pub(crate) async fn next(&mut self) -> Result<Option<Vec<Document>>> {
        let mut batch = Vec::with_capacity(self.size);
        while batch.len() < self.size {
            match self
                .cursor
                .try_next()
                .await
                .map_err(|e| Error::from_driver(self.collection, e))?
            {
                Some(d) => batch.push(d),
                None => break,
            }
        }
        if batch.is_empty() {
            // The count was taken before the read: the documents read are the true total.
            self.tracker.total_is_done();
            self.tracker.finish();
            return Ok(None);
        }
        self.tracker.advance(batch.len() as u64);
        Ok(Some(batch))
    }
}
