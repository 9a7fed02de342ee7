//! What a filter of the ODM's own writes carries of a sharded target's key, and where a filter
//! naming some fields goes: the shard feature's routing, the cascade plan and the writes of
//! every feature read it here, so that no feature asks another.

use bson::{Bson, Document};

use super::ShardKey;

/// The shard key of a collection whose documents are read, then written back by `_id` (a
/// cascade's batches of dependents, the sources of an update of many): the read projects the
/// key too, and each write adds `{field: {$in: the values read}}` per field of the key, so
/// that `mongos` sends it only to the shards owning those values rather than to every shard.
///
/// Nothing is added for an unsharded collection, one sharded by `_id` alone, or a key declared
/// `mutable`: a document whose key changed between the read and the write would no longer
/// match, and would be skipped. Nor when the values read would take more than
/// [`KEY_VALUES_BYTES`]: the write then scatters rather than pass the server's command limit.
pub(crate) struct KeyCarrier {
    fields: Vec<&'static str>,
}

/// Bytes of shard key values one write carries at most, beside its ids
/// ([`MAX_IDS_BYTES`](crate::batch::MAX_IDS_BYTES)) and the rest of the command.
pub(crate) const KEY_VALUES_BYTES: usize = crate::batch::MAX_IDS_BYTES / 4;

impl KeyCarrier {
    /// The carrier for a model's declared `key`.
    pub(crate) fn new(key: Option<ShardKey>) -> Self {
        let fields = key
            .filter(|k| !k.mutable)
            .map(|k| k.fields.iter().map(|(f, _)| *f).collect::<Vec<_>>())
            .filter(|f| f.iter().any(|f| *f != "_id"))
            .unwrap_or_default();
        KeyCarrier { fields }
    }

    /// The carrier for `collection`, known by name only: one look-up of the catalog.
    pub(crate) fn of(catalog: &crate::catalog::Catalog, collection: &str) -> Self {
        Self::new(catalog.shard_key_of(collection))
    }

    /// Whether nothing is carried (no key, `_id` alone, or a mutable key).
    pub(crate) fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Adds the key's fields to the projection of the read.
    pub(crate) fn project(&self, projection: &mut Document) {
        for f in &self.fields {
            projection.insert(*f, 1);
        }
    }

    /// Adds to `filter`'s top-level `$and` the condition on the key's values held by `docs`
    /// (as read with [`project`](Self::project)); a missing value is `null`, which also
    /// matches a document without the field, as the server places it. Nothing when nothing is
    /// carried, or when the distinct values take more than [`KEY_VALUES_BYTES`].
    pub(crate) fn restrict<'d>(
        &self,
        filter: &mut Document,
        docs: impl IntoIterator<Item = &'d Document>,
    ) {
        if self.fields.is_empty() {
            return;
        }
        let mut values: Vec<Vec<Bson>> = vec![Vec::new(); self.fields.len()];
        let mut seen: Vec<std::collections::HashSet<crate::document::IdKey>> =
            vec![Default::default(); self.fields.len()];
        let mut bytes = 0;
        for d in docs {
            for ((f, values), seen) in self.fields.iter().zip(&mut values).zip(&mut seen) {
                let v = crate::document::get_path(d, f)
                    .cloned()
                    .unwrap_or(Bson::Null);
                if seen.insert(crate::document::IdKey::of(&v)) {
                    bytes += crate::batch::element_size(values.len(), &v);
                    if bytes > KEY_VALUES_BYTES {
                        return;
                    }
                    values.push(v);
                }
            }
        }
        let conditions = self
            .fields
            .iter()
            .zip(values)
            .map(|(f, values)| Bson::Document(crate::literal::is_in(f, values)));
        crate::literal::and(filter, conditions);
    }
}

/// The fields of `key` that `filter` does not pin to one value (a top-level `{f: value}` or
/// `{f: {$eq: value}}`, or either inside a top-level `$and`).
pub(crate) fn unpinned(filter: &Document, key: &ShardKey) -> Vec<String> {
    key.fields
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !pins(filter, f))
        .map(str::to_owned)
        .collect()
}

fn pins(filter: &Document, field: &str) -> bool {
    let direct = match filter.get(field) {
        Some(Bson::Document(d)) => {
            d.len() == 1 && d.contains_key("$eq") || !d.keys().any(|k| k.starts_with('$'))
        }
        Some(_) => true,
        None => false,
    };
    direct
        || matches!(filter.get("$and"), Some(Bson::Array(parts)) if parts.iter().any(|p| {
            matches!(p, Bson::Document(d) if pins(d, field))
        }))
}

/// Where a command goes on a sharded cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteVerdict {
    /// The target collection is not sharded: the command goes to the shard holding it.
    Unsharded,
    /// The filter names the target's full shard key with equality: one shard (for an `$in`
    /// of several values, the shards owning those values only).
    Routed {
        /// The target's key, as `category` or `{host, time}`.
        key: String,
    },
    /// The filter lacks some of the target's key: every shard receives it.
    Scattered {
        /// The target's key.
        key: String,
        /// The fields of the key the filter does not name.
        missing: Vec<String>,
    },
}

impl RouteVerdict {
    /// Whether one shard (or the shards owning the named values) receives the command.
    pub fn is_routed(&self) -> bool {
        !matches!(self, RouteVerdict::Scattered { .. })
    }
}

pub(crate) fn verdict_for(
    key: Option<ShardKey>,
    _collection: &str,
    named: &[&str],
) -> RouteVerdict {
    let Some(key) = key else {
        return RouteVerdict::Unsharded;
    };
    let missing: Vec<String> = key
        .names()
        .into_iter()
        .filter(|f| !named.contains(f))
        .map(str::to_owned)
        .collect();
    if missing.is_empty() {
        RouteVerdict::Routed { key: key.show() }
    } else {
        RouteVerdict::Scattered {
            key: key.show(),
            missing,
        }
    }
}

impl super::Catalog {
    /// The verdict of a filter on `collection` that names (with equality) the fields `named`,
    /// among the models of this catalog: used by the routing report and the cascade plan.
    pub(crate) fn verdict(&self, collection: &str, named: &[&str]) -> RouteVerdict {
        verdict_for(self.shard_key_of(collection), collection, named)
    }
}
