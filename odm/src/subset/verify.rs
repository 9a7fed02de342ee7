//! Checking that every main document of a subset pair has its details and every details
//! document its main one, and deleting details left behind by an interrupted write.

use std::fmt;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::ClientSession;

use super::{Subset, SubsetPair};
use crate::{Error, Model, Result};

/// What [`SubsetPair::verify`] and [`SubsetPair::repair`] found (and deleted).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct SubsetReport {
    /// The main collection (`movies`).
    pub main: &'static str,
    /// The details' collection (`movie_details`).
    pub details: &'static str,
    /// Details whose main document does not exist: what an insert or a delete interrupted
    /// between its two writes leaves outside a transaction. No listing shows them.
    pub details_without_main: Vec<Bson>,
    /// Main documents without details. The ODM's writes never leave one; a document written
    /// behind its back can. Reported, never repaired: the details cannot be made up.
    pub main_without_details: Vec<Bson>,
    /// How many details [`SubsetPair::repair`] deleted (0 for `verify`).
    pub deleted: u64,
}

impl SubsetReport {
    /// Whether both sides match one for one.
    pub fn is_clean(&self) -> bool {
        self.details_without_main.is_empty() && self.main_without_details.is_empty()
    }
}

impl fmt::Display for SubsetReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} / {}: {} details without main, {} main without details, {} deleted",
            self.main,
            self.details,
            self.details_without_main.len(),
            self.main_without_details.len(),
            self.deleted
        )
    }
}

/// The `_id`s of the documents of `from` that no document of `other` shares: one `aggregate`
/// with a `$lookup` on `_id`, returning only the ids.
async fn unmatched(
    pair_odm: &crate::Odm,
    from: &str,
    other: &str,
    session: Option<&mut ClientSession>,
) -> Result<Vec<Bson>> {
    let pipeline = vec![
        doc! { "$project": { "_id": 1 } },
        doc! { "$lookup": { "from": other, "localField": "_id", "foreignField": "_id", "as": "other" } },
        doc! { "$match": { "other": { "$size": 0 } } },
        doc! { "$project": { "_id": 1 } },
    ];
    let coll = pair_odm.own_database().collection::<Document>(from);
    let error = |e| Error::from_driver(from, e);
    let docs: Vec<Document> = match session {
        None => coll
            .aggregate(pipeline)
            .await
            .map_err(error)?
            .try_collect()
            .await
            .map_err(error)?,
        Some(s) => {
            let mut cursor = coll
                .aggregate(pipeline)
                .session(&mut *s)
                .await
                .map_err(error)?;
            cursor.stream(s).try_collect().await.map_err(error)?
        }
    };
    Ok(docs
        .into_iter()
        .filter_map(|mut d| d.remove("_id"))
        .collect())
}

impl<D: Subset> SubsetPair<'_, D> {
    /// Finds the documents of either side that lack the other: two `aggregate`s (one per
    /// side, a `$lookup` on `_id` into the other, returning the ids only). Writes nothing.
    pub async fn verify(&self) -> Result<SubsetReport> {
        self.verify_in(crate::progress::Task::Verify, None).await
    }

    async fn verify_in(
        &self,
        task: crate::progress::Task,
        mut session: Option<&mut ClientSession>,
    ) -> Result<SubsetReport> {
        let (main, details) = (<D::Main as Model>::COLLECTION, D::COLLECTION);
        let mut progress = self.odm.track(
            task,
            crate::progress::Unit::Commands,
            || format!("subset {details} <-> {main}"),
            Some(2),
        );
        let details_without_main =
            unmatched(self.odm, details, main, session.as_deref_mut()).await?;
        progress.advance(1);
        let main_without_details = unmatched(self.odm, main, details, session).await?;
        progress.advance(1);
        progress.finish();
        Ok(SubsetReport {
            main,
            details,
            details_without_main,
            main_without_details,
            deleted: 0,
        })
    }

    /// [`SubsetPair::verify`], then deletes the details without a main document: the two
    /// `aggregate`s, then one `delete` per [chunk](crate::batch) of such ids (none when there
    /// are none). In one transaction when the [mode](SubsetPair::transaction) says so.
    /// Without one, run it while no pair insert is under way: the details an insert has
    /// written and whose main document it is about to write look like leftovers.
    pub async fn repair(&self) -> Result<SubsetReport> {
        if self.in_transaction().await? {
            return crate::transaction::in_transaction(self.odm, self, |_, s, me| {
                Box::pin(me.repair_in(Some(s)))
            })
            .await;
        }
        self.repair_in(None).await
    }

    async fn repair_in(&self, mut session: Option<&mut ClientSession>) -> Result<SubsetReport> {
        let mut report = self
            .verify_in(crate::progress::Task::Repair, session.as_deref_mut())
            .await?;
        let chunks = crate::batch::chunks_of(&report.details_without_main);
        let mut progress = self.odm.track(
            crate::progress::Task::Repair,
            crate::progress::Unit::Commands,
            || format!("subset {} without {}", report.details, report.main),
            Some(chunks.len() as u64),
        );
        for chunk in chunks {
            report.deleted += self.delete_details(chunk, session.as_deref_mut()).await?;
            progress.advance(1);
        }
        progress.finish();
        Ok(report)
    }
}

/// [`SubsetPair::repair`] of the pair of the collections `main` and `details`, for a caller
/// that knows them by name only (the follower, after its history was lost): the two
/// `aggregate`s, then one `delete` of the details without a main document per
/// [chunk](crate::batch) of their ids (a plain delete: the follower applies the delete rules of
/// what references them from their delete events). Outside a transaction.
pub(crate) async fn repair_by_name(
    odm: &crate::Odm,
    main: &'static str,
    details: &'static str,
) -> Result<SubsetReport> {
    let details_without_main = unmatched(odm, details, main, None).await?;
    let main_without_details = unmatched(odm, main, details, None).await?;
    let mut deleted = 0;
    for chunk in crate::batch::chunks_of(&details_without_main) {
        let orphans = crate::literal::is_in("_id", chunk);
        let write = crate::engine::Own::delete(details, orphans, "subset repair");
        deleted += odm.write_own(write, None).await?.matched;
    }
    Ok(SubsetReport {
        main,
        details,
        details_without_main,
        main_without_details,
        deleted,
    })
}
