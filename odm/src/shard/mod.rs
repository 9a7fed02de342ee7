//! Sharded collections: the shard key a model declares (`#[odm(shard_key(...))]`), what
//! `sync_indexes` does with it, the key the ODM adds to the filters of its own writes, and the
//! routing report.
//!
//! A sharded cluster routes a command to the one shard owning a document only when the
//! command names the document's full shard key with equality; otherwise `mongos` sends it to
//! every shard (scatter-gather) and merges the answers. Inserts always carry the key (the
//! document holds it). What the ODM adds:
//!
//! - [`Odm::sync_indexes`](crate::Odm::sync_indexes) creates the key's index with the other
//!   indexes, then, connected to a `mongos` (`hello` answering `msg: "isdbgrid"`), sends
//!   `enableSharding` and one `shardCollection` per sharded collection (see
//!   [`shard_collection_command`]); against a replica set or a standalone server it reports,
//!   in [`SyncReport::sharding`](crate::index::SyncReport::sharding), that nothing was sharded.
//! - [`Odm::replace_one`](crate::Odm::replace_one) (saving a loaded document) and
//!   [`Odm::delete_document`](crate::Odm::delete_document) filter on `_id` *and* the document's
//!   shard key values: routed.
//! - An upsert whose filter does not pin every field of the key with equality is refused with
//!   [`Error::ShardKeyMissing`] before anything is sent (the server could not tell which shard
//!   the new document belongs to).
//! - A computed key (`fill = "segment"`) is written by the ODM on every insert and replace:
//!   `"<YYYY-MM>-<md5>"`, see [`Segment`].
//! - The writes the ODM generates from relations (cascades, latest-N arrays, two-way
//!   references, delete rules, tree moves) find their documents by ids or references; each
//!   filter names the target's shard key when it is among those fields (a collection sharded
//!   by `_id`, a dependent sharded by the reference it is found through), and scatters
//!   otherwise. [`RoutingReport`] lists every one of them with its verdict and the reason.

mod check;
mod maintain;
mod report;
mod routing;
pub(crate) mod sync;

use bson::{Bson, Document};

use crate::{Error, Result};

pub use crate::catalog::RouteVerdict;
pub(crate) use crate::catalog::{pin_key, unpinned, KeyCarrier};
pub use crate::catalog::{Segment, ShardKey, ShardOrder};
pub use check::{filters_of, named_fields, unlisted, unlisted_in, Unlisted};
pub(crate) use maintain::ShardKeys;
pub use routing::{Route, RoutingReport};
pub use sync::{shard_collection_command, ShardSync};

/// The verdict of a filter on `collection` that names (with equality) the fields `named`,
/// among every linked model ([`verdict_in`] for a handle's catalog).
pub fn verdict(collection: &str, named: &[&str]) -> RouteVerdict {
    verdict_in(&crate::catalog::Catalog::linked(), collection, named)
}

/// The verdict of a filter on `collection` that names (with equality) the fields `named`,
/// among the models of `catalog`: used by the routing report and the cascade plan.
pub fn verdict_in(
    catalog: &crate::catalog::Catalog,
    collection: &str,
    named: &[&str],
) -> RouteVerdict {
    catalog.verdict(collection, named)
}

/// Refuses an upsert into a sharded collection whose filter does not pin the full key.
pub(crate) fn check_upsert(
    collection: &str,
    filter: &Document,
    key: &ShardKey,
    operation: &'static str,
) -> Result<()> {
    let missing = unpinned(filter, key);
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::ShardKeyMissing {
        collection: collection.to_owned(),
        id: match filter.get("_id") {
            Some(Bson::Document(d)) if d.contains_key("$eq") => crate::error::show_id(d.get("$eq")),
            Some(id) if crate::literal::plain(id) => crate::error::show_id(Some(id)),
            _ => crate::error::show_filter(filter),
        },
        operation,
        missing: missing.into(),
        key: key.names().into_iter().map(str::to_owned).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::fill_segment;
    use bson::{doc, RawDocumentBuf};

    const KEY: ShardKey = ShardKey {
        fields: &[("host", ShardOrder::Ranged), ("time", ShardOrder::Ranged)],
        segment: None,
        mutable: false,
    };

    #[test]
    fn carried_keys_are_the_distinct_values_read_each_as_a_value() {
        let carrier = KeyCarrier::new(Some(ShardKey {
            fields: &[
                ("meta.host", ShardOrder::Ranged),
                ("time", ShardOrder::Ranged),
            ],
            segment: None,
            mutable: false,
        }));
        let mut projection = doc! { "_id": 1 };
        carrier.project(&mut projection);
        assert_eq!(projection, doc! { "_id": 1, "meta.host": 1, "time": 1 });
        let read = [
            doc! { "_id": 1, "meta": { "host": "a" }, "time": 1 },
            doc! { "_id": 2, "meta": { "host": "a" }, "time": { "$gt": 0 } },
            doc! { "_id": 3, "time": 1 },
        ];
        let mut filter = doc! { "_id": { "$in": [1, 2, 3] }, "$and": [{ "x": 1 }] };
        carrier.restrict(&mut filter, &read);
        let and = filter.get_array("$and").unwrap();
        assert_eq!(and[0], Bson::Document(doc! { "x": 1 }));
        assert_eq!(
            and[1],
            Bson::Document(doc! { "meta.host": { "$in": ["a", Bson::Null] } })
        );
        // A value shaped like an operator is matched as a value.
        let time = and[2].as_document().unwrap().to_string();
        assert!(time.contains("\"$eq\": { \"$gt\": 0 }"), "{time}");
    }

    #[test]
    fn nothing_is_carried_for_a_mutable_key_an_id_key_or_too_many_bytes() {
        let mutable = KeyCarrier::new(Some(ShardKey {
            mutable: true,
            ..KEY
        }));
        let by_id = KeyCarrier::new(Some(ShardKey {
            fields: &[("_id", ShardOrder::Hashed)],
            ..KEY
        }));
        let read = [doc! { "_id": 1, "host": "a", "time": 1 }];
        for carrier in [mutable, by_id, KeyCarrier::new(None)] {
            let mut filter = doc! { "_id": 1 };
            carrier.restrict(&mut filter, &read);
            assert_eq!(filter, doc! { "_id": 1 });
        }
        let big: Vec<Document> = (0..2_100)
            .map(|i| doc! { "_id": i, "host": format!("{i:01000}"), "time": 1 })
            .collect();
        let mut filter = doc! { "_id": 1 };
        KeyCarrier::new(Some(KEY)).restrict(&mut filter, &big);
        assert_eq!(filter, doc! { "_id": 1 }, "past the budget: scattered");
        let mut filter = doc! { "_id": 1 };
        KeyCarrier::new(Some(KEY)).restrict(&mut filter, &big[..100]);
        assert!(filter.contains_key("$and"));
    }

    #[test]
    fn a_filter_pins_a_field_by_value_eq_or_inside_and() {
        assert!(unpinned(&doc! { "host": 1, "time": { "$eq": 2 } }, &KEY).is_empty());
        assert!(unpinned(
            &doc! { "$and": [ { "host": { "$eq": 1 } }, { "time": 3 } ] },
            &KEY
        )
        .is_empty());
        assert_eq!(
            unpinned(&doc! { "host": 1, "time": { "$gt": 2 } }, &KEY),
            vec!["time"]
        );
        assert_eq!(unpinned(&doc! { "_id": 1 }, &KEY), vec!["host", "time"]);
    }

    #[test]
    fn a_dotted_key_is_read_inside_the_embedded_document_or_pinned_to_null() {
        const DOTTED: ShardKey = ShardKey {
            fields: &[("source.host", ShardOrder::Ranged)],
            segment: None,
            mutable: false,
        };
        let pinned = |doc: bson::Document| {
            let raw = RawDocumentBuf::try_from(&doc).unwrap();
            let mut filter = doc! { "_id": 1 };
            pin_key(&mut filter, &raw, &DOTTED);
            filter
        };
        assert_eq!(
            pinned(doc! { "source": { "host": "web-1", "app": "api" } }),
            doc! { "_id": 1, "source.host": "web-1" }
        );
        // Missing, or a path through a value that is not a document: the server places such a
        // document by `null`.
        for doc in [doc! {}, doc! { "source": "web-1" }, doc! { "source": {} }] {
            assert_eq!(pinned(doc), doc! { "_id": 1, "source.host": Bson::Null });
        }
        // A stored value shaped like an operator is matched as a value, never run as one.
        assert_eq!(
            pinned(doc! { "source": { "host": { "$ne": "" } } }),
            doc! { "_id": 1, "source.host": { "$eq": { "$ne": "" } } }
        );
    }

    #[test]
    fn a_segment_is_the_month_then_the_md5_of_the_hashed_field() {
        let key = ShardKey {
            fields: &[("segment", ShardOrder::Ranged)],
            segment: Some(Segment {
                field: "segment",
                month: "at",
                hash: "data",
            }),
            mutable: false,
        };
        let at = bson::DateTime::from_millis(1_715_000_000_000); // 2024-05-06
        let mut raw = bson::serialize_to_raw_document_buf(&doc! {
            "_id": 1, "at": at, "data": "abc", "segment": ""
        })
        .unwrap();
        fill_segment("images", &mut raw, &key).unwrap();
        assert_eq!(
            raw.get_str("segment").unwrap(),
            "2024-05-900150983cd24fb0d6963f7d28e17f72"
        );
        let mut bad =
            bson::serialize_to_raw_document_buf(&doc! { "_id": 2, "at": "May", "data": "x" })
                .unwrap();
        let err = fill_segment("images", &mut bad, &key)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("images") && err.contains("_id: 2") && err.contains("`at`"),
            "{err}"
        );
    }
}
