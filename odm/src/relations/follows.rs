//! Delete rules and two-way references kept for other programs' writes (see
//! [`crate::engine::Follows`]): a document another program deleted, and still gone, has its
//! delete rules applied; a child another program moved, inserted, replaced or deleted is
//! listed by the parent it names and by no other.

use std::collections::BTreeMap;

use bson::{doc, Bson, Document};

use super::TwoWay;
use crate::catalog::Catalog;
use crate::engine::{
    Absent, Applied, BadDocument, BoxFuture, Event, Follows, Ids, Interest, Noticed, Op,
};
use crate::error::DeleteRestricted;
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
    /// The documents referenced but missing, and the `restrict` rules their deletes broke.
    type Swept = (u64, Vec<DeleteRestricted>);

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

    /// The delete rules of the documents other documents reference that are gone.
    fn lost<'a>(odm: &'a Odm, watched: &'a [&'static str]) -> BoxFuture<'a, Result<Self::Swept>> {
        Box::pin(async move {
            let mut dangling = 0;
            let mut violations = Vec::new();
            for &collection in watched {
                if !super::has_rules(odm.catalog(), collection) {
                    continue;
                }
                let missing = missing_targets(odm, collection).await?;
                if missing.is_empty() {
                    continue;
                }
                dangling += missing.len() as u64;
                let keys = missing.into_iter().map(|id| doc! { "_id": id }).collect();
                violations.extend(super::after_deleted(odm, collection, keys).await?);
            }
            Ok((dangling, violations))
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
    type Swept = ();

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

/// The ids other documents reference in `collection` (through plain references; DBRefs are
/// left to the copies' sweep) that no document of it has. Per reference field one `distinct`,
/// then one `find` of the ids per [chunk](crate::batch) (`engine::missing_in`).
async fn missing_targets(odm: &Odm, collection: &str) -> Result<Vec<Bson>> {
    let mut referenced: Vec<Bson> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in odm.catalog().references_to(collection) {
        if r.dbref.is_some() {
            continue;
        }
        let values = odm
            .own_database()
            .collection::<bson::Document>(r.from)
            .distinct(
                r.path.as_str(),
                doc! { r.path.as_str(): { "$ne": Bson::Null } },
            )
            .await
            .map_err(|e| crate::Error::from_driver(r.from, e))?;
        for v in values {
            if seen.insert(crate::document::IdKey::of(&v)) {
                referenced.push(v);
            }
        }
    }
    crate::engine::missing_in(odm, collection, referenced).await
}
