//! Delete rules and two-way references kept for other programs' writes (see
//! [`crate::engine::Follows`]): a document another program deleted, and still gone, has its
//! delete rules applied; a child another program moved, inserted, replaced or deleted is
//! listed by the parent it names and by no other.

use std::collections::BTreeMap;

use bson::Document;

use super::TwoWay;
use crate::catalog::Catalog;
use crate::engine::{
    Absent, Applied, BadDocument, BoxFuture, Event, Follows, Ids, Interest, Noticed, Op,
};
use crate::{Odm, Result};

/// The delete rules of documents other programs deleted.
pub(crate) struct RulesFollow;

/// The keys of the documents deleted, once each.
#[derive(Default)]
pub(crate) struct Deleted {
    ids: Ids,
    keys: Vec<Document>,
}

impl Follows for RulesFollow {
    type Noted = Deleted;
    type Batch = ();

    fn interest(catalog: &Catalog, collection: &'static str) -> Interest {
        Interest::Deletes.when(super::has_rules(catalog, collection))
    }

    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Deleted,
        _batch: &mut (),
    ) -> Noticed {
        if event.op != Op::Delete || !super::has_rules(odm.catalog(), collection) {
            return Noticed::Nothing;
        }
        if noted.ids.add(event.id) {
            noted.keys.push(event.key.clone());
        }
        Noticed::Deleted
    }

    fn apply<'a>(
        odm: &'a Odm,
        collection: &'static str,
        noted: Deleted,
        absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            // A document deleted, then inserted again, keeps what references it.
            let keys: Vec<Document> = noted
                .keys
                .into_iter()
                .filter(|k| k.get("_id").is_some_and(|id| absent.holds(id)))
                .collect();
            if keys.is_empty() {
                return Ok(());
            }
            out.deleted += keys.len() as u64;
            out.violations
                .extend(super::after_deleted(odm, collection, keys).await?);
            Ok(())
        })
    }
}

/// The parents' arrays of two-way references whose children other programs wrote.
pub(crate) struct TwoWayFollow;

/// The collection's two-way references (found on its first event), and the children whose
/// reference may have changed, by reference.
#[derive(Default)]
pub(crate) struct Children {
    pairs: Option<Vec<TwoWay>>,
    moved: BTreeMap<usize, Ids>,
}

impl Follows for TwoWayFollow {
    type Noted = Children;
    type Batch = ();

    fn interest(catalog: &Catalog, collection: &'static str) -> Interest {
        Interest::All.when(!super::two_way_of(catalog, collection).is_empty())
    }

    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Children,
        _batch: &mut (),
    ) -> Noticed {
        let pairs = noted
            .pairs
            .get_or_insert_with(|| super::two_way_of(odm.catalog(), collection));
        let mut any = Noticed::Nothing;
        for (i, pair) in pairs.iter().enumerate() {
            if event.touches(&pair.link) {
                noted.moved.entry(i).or_default().add(event.id);
                any = Noticed::Something;
            }
        }
        any
    }

    /// Each child moved, inserted, replaced or deleted listed by the parent it names and by no
    /// other (see [`super::settle`]). A parent whose array cannot take a child, or whose
    /// bounded array is full, is reported in the follower's bad documents.
    fn apply<'a>(
        odm: &'a Odm,
        _collection: &'static str,
        noted: Children,
        _absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let pairs = noted.pairs.unwrap_or_default();
            for (i, ids) in &noted.moved {
                let Some(pair) = pairs.get(*i) else {
                    continue;
                };
                let done = super::settle(odm, pair, &ids.list).await?;
                out.two_way_parents += done.parents;
                let full = done.full.into_iter().map(|(parent, child)| {
                    let max = pair.max.unwrap_or_default();
                    let child = crate::error::show_id(Some(&child));
                    (
                        parent,
                        format!("bounded to {max} children: child {child} left out"),
                    )
                });
                for (parent, message) in done.malformed.into_iter().chain(full) {
                    let bad = BadDocument {
                        collection: pair.parent.to_owned(),
                        id: crate::error::show_id(Some(&parent)),
                        path: pair.array.clone(),
                        message,
                    };
                    out.bad(bad, "a two-way reference");
                }
            }
            Ok(())
        })
    }
}
