//! Subset pairs kept for other programs' writes (see [`crate::engine::Follows`]): the details
//! of a main document another program deleted, and still gone, are deleted with it; a side
//! another program wrote alone is looked at again after a pause and repaired or reported.
//!
//! One side written alone: a details document inserted without its main document (an orphan
//! no listing shows, which the pair's repair deletes), a main document inserted without its
//! details, or details deleted from under their main document (which no details can be made
//! up for: reported). odm's own pair insert without a transaction writes the details first,
//! then the main document: a follower reading between the two would take the details for an
//! orphan. So a side found alone is looked at again after
//! [`Follower::pair_settle`](crate::follower::Follower::pair_settle) (one second by default),
//! and only what is still alone then is acted on.

use std::time::Duration;

use bson::Bson;

use crate::catalog::Catalog;
use crate::document::IdKey;
use crate::engine::{
    Absent, Applied, BadDocument, BoxFuture, Event, Follows, Ids, Interest, Noticed, Op, Own,
};
use crate::{Odm, Result};

/// The subset pairs other programs wrote.
pub(crate) struct SubsetFollow;

/// The collection's sides of subset pairs (found on its first event), and the main documents
/// deleted.
#[derive(Default)]
pub(crate) struct Sides {
    found: Option<(Vec<&'static str>, Option<&'static str>)>,
    deleted: Ids,
}

/// The details' collections of the main side `collection`, and the main side's collection
/// when `collection` holds details.
fn sides_of(catalog: &Catalog, collection: &str) -> (Vec<&'static str>, Option<&'static str>) {
    let mut details = Vec::new();
    let mut main = None;
    for entry in catalog
        .models()
        .iter()
        .filter(|e| e.collection == collection)
    {
        details.extend(
            catalog
                .models()
                .iter()
                .filter(|d| d.subset_of == Some(entry.type_name))
                .map(|d| d.collection),
        );
        main = main.or_else(|| {
            let m = entry.subset_of?;
            catalog
                .models()
                .iter()
                .find(|e| e.type_name == m)
                .map(|e| e.collection)
        });
    }
    (details, main)
}

impl Follows for SubsetFollow {
    type Noted = Sides;
    type Batch = Alone;
    type Swept = Vec<super::SubsetReport>;

    fn interest(catalog: &Catalog, collection: &'static str) -> Interest {
        match sides_of(catalog, collection) {
            (details, None) if details.is_empty() => Interest::None,
            _ => Interest::InsertsAndDeletes,
        }
    }

    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Sides,
        alone: &mut Alone,
    ) -> Noticed {
        let (details, main) = noted
            .found
            .get_or_insert_with(|| sides_of(odm.catalog(), collection));
        let mut any = Noticed::Nothing;
        if let Some(main) = *main {
            match event.op {
                Op::Insert => alone.details_inserted(collection, main, event.id),
                Op::Delete => alone.main_needs(main, collection, event.id),
                Op::Update | Op::Replace => return Noticed::Nothing,
            }
            any = Noticed::Something;
        }
        if event.op == Op::Insert {
            for d in details.iter() {
                alone.main_needs(collection, d, event.id);
                any = Noticed::Something;
            }
        }
        if event.op == Op::Delete && !details.is_empty() {
            noted.deleted.add(event.id);
            any = Noticed::Deleted;
        }
        any
    }

    /// The details of deleted main documents go with them, as an ODM delete of the pair
    /// removes both sides: one `delete` per details collection and [chunk](crate::batch).
    fn apply<'a>(
        odm: &'a Odm,
        _collection: &'static str,
        noted: Sides,
        absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let ids = noted.deleted.absent(absent);
            let details = noted.found.map(|(d, _)| d).unwrap_or_default();
            for d in details {
                for chunk in crate::batch::chunks_of(&ids) {
                    let write =
                        Own::delete(d, crate::literal::is_in("_id", chunk), "subset delete");
                    out.details_deleted += odm.write_own(write, None).await?.matched;
                }
            }
            Ok(())
        })
    }

    fn finish<'a>(
        odm: &'a Odm,
        alone: Alone,
        settle: Duration,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(alone.finish(odm, settle, out))
    }

    /// Each pair whose main side is watched repaired: details without their main document
    /// deleted, main documents without details reported.
    fn lost<'a>(odm: &'a Odm, watched: &'a [&'static str]) -> BoxFuture<'a, Result<Self::Swept>> {
        Box::pin(async move {
            let mut reports = Vec::new();
            for &collection in watched {
                for details in sides_of(odm.catalog(), collection).0 {
                    reports.push(super::repair_by_name(odm, collection, details).await?);
                }
            }
            Ok(reports)
        })
    }
}

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
    /// deleted (counted in the follower's report); main documents still without
    /// details are reported as bad documents (path `_id`).
    ///
    /// Commands: per side noted, one `find` of the other side's ids and, for the ids missing,
    /// one `find` of the noted side's (a document deleted meanwhile is not alone), per
    /// [chunk](crate::batch); the same again after the pause when any was alone; one `delete`
    /// of the orphaned details per chunk.
    pub(crate) async fn finish(self, odm: &Odm, settle: Duration, out: &mut Applied) -> Result<()> {
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
                let write = Own::delete(d, crate::literal::is_in("_id", chunk), "subset repair");
                out.details_deleted += odm.write_own(write, None).await?.matched;
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
                out.bad(bad, "a subset pair missing a side");
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
    let missing = crate::engine::missing_in(odm, other, ids).await?;
    let gone = crate::engine::missing_in(odm, side, missing.clone()).await?;
    Ok(missing
        .into_iter()
        .filter(|id| !gone.iter().any(|g| IdKey::of(g) == IdKey::of(id)))
        .collect())
}
