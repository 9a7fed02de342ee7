//! Reading a whole collection in `_id` order, one batch at a time: what the verify/repair
//! sweeps share, so that their memory holds one batch whatever the collection's size.

use bson::{doc, Document};
use futures_util::TryStreamExt;
use mongodb::Cursor;

use crate::{Error, Odm, Result};

/// The documents of a collection (only the projected fields), in `_id` order, in batches of
/// `size`. One `find`, plus `getMore`s.
pub(crate) struct Batches<'c> {
    collection: &'c str,
    cursor: Cursor<Document>,
    size: usize,
}

impl<'c> Batches<'c> {
    pub(crate) async fn open(
        odm: &Odm,
        collection: &'c str,
        projection: Document,
        size: usize,
    ) -> Result<Batches<'c>> {
        Batches::matching(odm, collection, doc! {}, projection, size).await
    }

    /// The documents matching `filter` (a kind's, say), likewise.
    pub(crate) async fn matching(
        odm: &Odm,
        collection: &'c str,
        filter: Document,
        projection: Document,
        size: usize,
    ) -> Result<Batches<'c>> {
        let cursor = odm
            .database()
            .collection::<Document>(collection)
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
        Ok((!batch.is_empty()).then_some(batch))
    }
}
