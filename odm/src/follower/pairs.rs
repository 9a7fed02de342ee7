//! Subset pairs one side of which another program wrote alone: a details document inserted
//! without its main document (an orphan no listing shows, which the pair's repair deletes), a
//! main document inserted without its details, or details deleted from under their main
//! document (which no details can be made up for: reported).
//!
//! odm's own pair insert without a transaction writes the details first, then the main
//! document: a follower reading between the two would take the details for an orphan. So a
//! side found alone is looked at again after
//! [`Follower::pair_settle`](super::Follower::pair_settle) (one second by default), and only
//! what is still alone then is acted on.

use std::time::Duration;

use bson::{doc, Bson};
use mongodb::options::FindOptions;

use super::{BadDocument, FollowerReport};
use crate::document::IdKey;
use crate::{Odm, Result};

/// One side of a subset pair written alone, as noted from the events.
#[derive(Debug, Default)]
pub(crate) struct Alone {
    /// Details inserted, by details collection: `(main collection, ids)`.
    pub(crate) details: Vec<(&'static str, &'static str, Vec<Bson>)>,
    /// Main documents inserted, or whose details were deleted: `(main, details, ids)`.
    pub(crate) mains: Vec<(&'static str, &'static str, Vec<Bson>)>,
}

impl Alone {
    fn add(
        list: &mut Vec<(&'static str, &'static str, Vec<Bson>)>,
        a: &'static str,
        b: &'static str,
        id: &Bson,
    ) {
        match list.iter_mut().find(|(x, y, _)| *x == a && *y == b) {
            Some((_, _, ids)) => {
                if !ids.iter().any(|i| IdKey::of(i) == IdKey::of(id)) {
                    ids.push(id.clone());
                }
            }
            None => list.push((a, b, vec![id.clone()])),
        }
    }

    /// Details `id` of `details` were inserted: its main document, in `main`, must exist.
    pub(crate) fn details_inserted(
        &mut self,
        details: &'static str,
        main: &'static str,
        id: &Bson,
    ) {
        Self::add(&mut self.details, details, main, id);
    }

    /// Main document `id` of `main` was inserted, or its details in `details` deleted: its
    /// details must exist (or the main document be gone).
    pub(crate) fn main_needs(&mut self, main: &'static str, details: &'static str, id: &Bson) {
        Self::add(&mut self.mains, main, details, id);
    }

    /// Finishes the pairs: details whose main document is still missing after `settle` are
    /// deleted (counted in [`FollowerReport::details_deleted`]); main documents still without
    /// details are reported in [`FollowerReport::bad_documents`] (path `_id`).
    ///
    /// Commands: per side noted, one `find` of the other side's ids and, for the ids missing,
    /// one `find` of the noted side's (a document deleted meanwhile is not alone), per
    /// [chunk](crate::batch); the same again after the pause when any was alone; one `delete`
    /// of the orphaned details per chunk.
    pub(crate) async fn finish(
        self,
        odm: &Odm,
        settle: Duration,
        report: &mut FollowerReport,
    ) -> Result<()> {
        let mut details = Vec::new();
        for (d, m, ids) in self.details {
            details.push((d, m, alone(odm, d, m, ids).await?));
        }
        let mut mains = Vec::new();
        for (m, d, ids) in self.mains {
            mains.push((m, d, alone(odm, m, d, ids).await?));
        }
        let waiting = details
            .iter()
            .chain(&mains)
            .any(|(_, _, ids)| !ids.is_empty());
        if !waiting {
            return Ok(());
        }
        tokio::time::sleep(settle).await;
        for (d, m, ids) in details {
            let orphans = alone(odm, d, m, ids).await?;
            for chunk in crate::batch::chunks_of(&orphans) {
                let coll = odm.database().collection::<bson::Document>(d);
                report.details_deleted += coll
                    .delete_many(crate::literal::is_in("_id", chunk))
                    .await
                    .map_err(|e| crate::Error::from_driver(d, e))?
                    .deleted_count;
            }
        }
        for (m, d, ids) in mains {
            for id in alone(odm, m, d, ids).await? {
                let bad = BadDocument {
                    collection: m.to_owned(),
                    id: crate::error::show_id(Some(&id)),
                    path: "_id".to_owned(),
                    message: format!(
                        "no details in `{d}`, the other side of its subset pair: left to the program that wrote it (details cannot be made up)"
                    ),
                };
                tracing::warn!(target: "odm", document = %bad, "follower: a subset pair is missing a side");
                report.bad_documents.push(bad);
            }
        }
        Ok(())
    }
}

/// Of `ids`, those that `side` holds and `other` does not.
async fn alone(odm: &Odm, side: &str, other: &str, ids: Vec<Bson>) -> Result<Vec<Bson>> {
    if ids.is_empty() {
        return Ok(ids);
    }
    let missing = missing_in(odm, other, ids).await?;
    let gone = missing_in(odm, side, missing.clone()).await?;
    Ok(missing
        .into_iter()
        .filter(|id| !gone.iter().any(|g| IdKey::of(g) == IdKey::of(id)))
        .collect())
}

/// Of `ids`, those no document of `collection` has: one `find` projecting `_id` per chunk.
pub(super) async fn missing_in(odm: &Odm, collection: &str, ids: Vec<Bson>) -> Result<Vec<Bson>> {
    let mut found = std::collections::HashSet::new();
    for chunk in crate::batch::chunks_of(&ids) {
        let options = FindOptions::builder().projection(doc! { "_id": 1 }).build();
        let filter = crate::literal::is_in("_id", chunk);
        for d in crate::engine::find_documents(odm, collection, filter, options, None).await? {
            if let Some(id) = d.get("_id") {
                found.insert(IdKey::of(id));
            }
        }
    }
    Ok(ids
        .into_iter()
        .filter(|id| !found.contains(&IdKey::of(id)))
        .collect())
}
