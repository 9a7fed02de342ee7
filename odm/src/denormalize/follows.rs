//! Copies and latest-N arrays kept for other programs' writes (see [`crate::engine::Follows`]):
//! a source whose copied fields another program changed is cascaded to its copies; the
//! latest-N arrays a write may have entered, moved or left are recomputed.

use super::{CopyInfo, CopyKind};
use crate::catalog::Catalog;
use crate::engine::{
    Absent, Applied, BadDocument, BoxFuture, Event, Follows, Ids, Interest, Noticed, Op,
};
use crate::{Odm, Result};

/// The cascades of sources other programs wrote.
pub(crate) struct CopiesFollow;

/// Sources whose copied fields changed, and the copies concerned.
#[derive(Default)]
pub(crate) struct Cascades {
    sources: Ids,
    copies: Vec<CopyInfo>,
}

/// Whether other models copy from `collection` (copied fields, summaries, latest-N arrays).
fn copied(catalog: &Catalog, collection: &str) -> bool {
    !catalog.copies_from(collection).is_empty()
}

impl Follows for CopiesFollow {
    type Noted = Cascades;
    type Batch = ();
    type Swept = super::CopyReport;

    fn interest(catalog: &Catalog, collection: &'static str) -> Interest {
        Interest::All.when(copied(catalog, collection))
    }

    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Cascades,
        _batch: &mut (),
    ) -> Noticed {
        // An insert gives no copy yet, and a deleted source's summaries go with its rules.
        if !matches!(event.op, Op::Update | Op::Replace) || !copied(odm.catalog(), collection) {
            return Noticed::Nothing;
        }
        let cascaded = super::follow::cascaded_touched(odm, collection, event.paths);
        if cascaded.is_empty() {
            return Noticed::Nothing;
        }
        noted.sources.add(event.id);
        for c in cascaded {
            let known = noted
                .copies
                .iter()
                .any(|k| k.dependent == c.dependent && k.path == c.path);
            if !known {
                noted.copies.push(c);
            }
        }
        Noticed::Something
    }

    fn apply<'a>(
        odm: &'a Odm,
        collection: &'static str,
        noted: Cascades,
        _absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if noted.sources.list.is_empty() {
                return Ok(());
            }
            let ids = &noted.sources.list;
            let bad = super::cascade_sources(odm, collection, ids, noted.copies).await?;
            let sources_left = bad.iter().filter(|b| b.collection == collection).count();
            out.cascaded += ids.len().saturating_sub(sources_left) as u64;
            for b in bad {
                out.bad(b.into(), "a document");
            }
            Ok(())
        })
    }

    /// Every copy swept and repaired (`verify_copies` with repair: copied fields, summaries,
    /// latest-N arrays, two-way references), whichever collections are watched.
    fn lost<'a>(
        odm: &'a Odm,
        _watched: &'a [&'static str],
    ) -> BoxFuture<'a, Result<super::CopyReport>> {
        Box::pin(async move { odm.verify_copies().repair(true).await })
    }
}

/// The latest-N arrays of sources other programs wrote.
pub(crate) struct LatestFollow;

/// Latest-N arrays and the sources that may have entered, moved or left them.
#[derive(Default)]
pub(crate) struct Arrays(Vec<(CopyInfo, Ids)>);

impl Follows for LatestFollow {
    type Noted = Arrays;
    type Batch = ();
    type Swept = ();

    fn interest(catalog: &Catalog, collection: &'static str) -> Interest {
        let latest = catalog
            .copies_from(collection)
            .iter()
            .any(|c| matches!(c.kind, CopyKind::Latest { .. }));
        Interest::All.when(latest)
    }

    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Arrays,
        _batch: &mut (),
    ) -> Noticed {
        if !copied(odm.catalog(), collection) {
            return Noticed::Nothing;
        }
        let latest = super::follow::latest_touched_by(odm, collection, event.paths);
        let mut any = Noticed::Nothing;
        for copy in latest {
            let at = noted
                .0
                .iter()
                .position(|(c, _)| c.dependent == copy.dependent && c.path == copy.path);
            let at = at.unwrap_or_else(|| {
                noted.0.push((copy, Ids::default()));
                noted.0.len() - 1
            });
            noted.0[at].1.add(event.id);
            any = Noticed::Something;
        }
        any
    }

    fn apply<'a>(
        odm: &'a Odm,
        _collection: &'static str,
        noted: Arrays,
        _absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for (copy, ids) in &noted.0 {
                let (parents, refused) = super::refresh_latest_of(odm, copy, &ids.list).await?;
                out.latest_parents += parents;
                for e in refused {
                    out.bad(e.into(), "a document");
                }
            }
            Ok(())
        })
    }
}

impl From<super::Unapplied> for BadDocument {
    fn from(u: super::Unapplied) -> Self {
        BadDocument {
            collection: u.collection,
            id: u.id,
            path: u.path,
            message: u.message,
        }
    }
}
