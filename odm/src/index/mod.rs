//! Declared indexes, `sync_indexes`, and the index use of the queries odm generates
//! ([`Odm::explain_shapes`](crate::Odm::explain_shapes)).
//!
//! Each model's indexes come from its attributes (`#[index]`, `#[odm(index(...))]`) and, later,
//! from the features that need them (references, cascades). [`Odm::sync_indexes`] makes the
//! database match: it creates what is missing, and reports, never silently drops, what differs
//! or is not declared.
//!
//! [`Odm::sync_indexes`]: crate::Odm::sync_indexes

use std::collections::BTreeSet;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

use bson::{doc, Bson, Document};

use crate::model::Model;

mod explain;

#[cfg(feature = "testing")]
pub(crate) use explain::winning;
pub use explain::{
    query_shapes, Access, ExplainShapes, ExplainedShape, IndexState, QueryFeature, QueryShape,
    ShapeCommand, ShapeReport, ShapeSource,
};

pub use crate::catalog::{IndexKey, IndexSpec};
pub use crate::error::{CollectionSync, IndexDiff, IndexFailure, SyncReport};
use crate::{Error, Odm, Result};

impl IndexSpec {
    /// How an existing index (as `listIndexes` reports it) differs from this declaration; empty
    /// when it matches.
    fn differences(&self, existing: &Document) -> Vec<String> {
        let mut out = Vec::new();
        let declared = normalized_keys(&self.key_document(), None);
        let found = normalized_keys(
            existing.get_document("key").unwrap_or(&Document::new()),
            existing.get_document("weights").ok(),
        );
        if declared != found {
            out.push(format!("keys: declared {declared}, found {found}"));
        }
        let flag = |name: &str| existing.get_bool(name).unwrap_or(false);
        if flag("unique") != self.unique {
            out.push(format!(
                "unique: declared {}, found {}",
                self.unique,
                flag("unique")
            ));
        }
        if flag("sparse") != self.sparse {
            out.push(format!(
                "sparse: declared {}, found {}",
                self.sparse,
                flag("sparse")
            ));
        }
        let partial = existing.get_document("partialFilterExpression").ok();
        if partial != self.partial.as_ref() {
            out.push(format!(
                "partialFilterExpression: declared {}, found {}",
                show(self.partial.as_ref()),
                show(partial)
            ));
        }
        if let Some(declared) = &self.collation {
            let found = existing.get_document("collation").ok();
            // The server lists every field of a collation; what was declared must match.
            let same = found.is_some_and(|found| {
                declared
                    .iter()
                    .all(|(k, v)| found.get(k).is_some_and(|f| same_value(f, v)))
            });
            if !same {
                out.push(format!(
                    "collation: declared {declared}, found {}",
                    show(found)
                ));
            }
        } else if let Ok(found) = existing.get_document("collation") {
            out.push(format!("collation: declared none, found {found}"));
        }
        // An index hidden by the database's operator (`collMod`) is their choice, reported as
        // it is by `explain`; one declared hidden and found visible differs.
        if self.hidden && !flag("hidden") {
            out.push("hidden: declared true, found false".to_owned());
        }
        let ttl = existing
            .get("expireAfterSeconds")
            .and_then(as_f64)
            .map(|s| s as u64);
        if ttl != self.expire_after_secs {
            out.push(format!(
                "expireAfterSeconds: declared {:?}, found {:?}",
                self.expire_after_secs, ttl
            ));
        }
        out
    }
}

/// Two values equal, a number whatever its BSON type.
fn same_value(a: &Bson, b: &Bson) -> bool {
    match (as_f64(a), as_f64(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn show(d: Option<&Document>) -> String {
    d.map_or_else(|| "none".to_owned(), |d| d.to_string())
}

fn as_f64(b: &Bson) -> Option<f64> {
    match b {
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

/// Keys in a comparable form: numbers as `1`/`-1`, and a text index's internal `_fts`/`_ftsx`
/// keys replaced by its text fields (from `weights`), sorted, as they were declared.
fn normalized_keys(key: &Document, weights: Option<&Document>) -> String {
    let mut parts = Vec::new();
    let mut text: BTreeSet<String> = BTreeSet::new();
    for (k, v) in key {
        match (k.as_str(), v) {
            ("_fts", _) => {
                if let Some(w) = weights {
                    text.extend(w.keys().cloned());
                }
            }
            ("_ftsx", _) => {}
            (_, Bson::String(s)) if s == "text" => {
                text.insert(k.clone());
            }
            (_, v) => {
                let dir = as_f64(v).map_or_else(
                    || v.to_string(),
                    |n| if n < 0.0 { "-1".into() } else { "1".into() },
                );
                parts.push(format!("{k}: {dir}"));
            }
        }
    }
    for t in text {
        parts.push(format!("{t}: \"text\""));
    }
    format!("{{ {} }}", parts.join(", "))
}

/// Index sync on the handle.
impl Odm {
    /// Makes the database's indexes match the declarations of every model linked into the
    /// program. See [`SyncIndexes`] for the commands it sends and the opt-in drops.
    ///
    /// ```no_run
    /// # async fn run(odm: &odm::Odm) -> odm::Result<()> {
    /// // At start-up: creates the declared indexes that are missing, drops nothing.
    /// let report = odm.sync_indexes().await?;
    /// print!("{report}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn sync_indexes(&self) -> SyncIndexes<'_> {
        SyncIndexes::all(self)
    }

    /// Like [`Odm::sync_indexes`], for one model's collection only.
    pub fn sync_indexes_of<T: Model>(&self) -> SyncIndexes<'_> {
        SyncIndexes::of::<T>(self)
    }
}

/// Builder returned by [`Odm::sync_indexes`]; `.await` it.
///
/// Sends, per collection: one `listIndexes`; one `createIndexes` when something is missing; one
/// `dropIndexes` per index it was told to drop. When a synced model declares a shard key (whose
/// index is among its indexes), one `hello` after them, and on a `mongos` only, one
/// `enableSharding` and one `shardCollection` per sharded collection (see [`crate::shard`]);
/// elsewhere [`SyncReport::sharding`] says that nothing was sharded. A second run against an up-to-date database
/// sends only the `listIndexes` commands. A collection a model declares as a native time-series
/// collection is created as one first: one `listCollections`, and one `create` when it is
/// missing (see [`counters::series`](crate::counters::series)).
///
/// When the server refuses an index (say, a text index on a server without text search), the
/// indexes of that collection are retried one `createIndexes` each, every other collection is
/// still synced, and the result is [`Error::IndexSync`] carrying the full report.
#[must_use = "the sync runs when awaited"]
#[derive(Debug)]
pub struct SyncIndexes<'a> {
    odm: &'a Odm,
    targets: Vec<(String, Vec<IndexSpec>)>,
    drop_extra: bool,
    replace_differing: bool,
}

impl<'a> SyncIndexes<'a> {
    pub(crate) fn all(odm: &'a Odm) -> Self {
        let mut targets: Vec<(String, Vec<IndexSpec>)> = Vec::new();
        for entry in odm.catalog().models() {
            let specs = (entry.indexes)();
            match targets.iter_mut().find(|(c, _)| c == entry.collection) {
                Some((_, existing)) => merge(existing, specs),
                None => targets.push((entry.collection.to_owned(), specs)),
            }
        }
        SyncIndexes::new(odm, targets)
    }

    pub(crate) fn of<T: Model>(odm: &'a Odm) -> Self {
        SyncIndexes::new(odm, vec![(T::COLLECTION.to_owned(), T::indexes())])
    }

    fn new(odm: &'a Odm, targets: Vec<(String, Vec<IndexSpec>)>) -> Self {
        SyncIndexes {
            odm,
            targets,
            drop_extra: false,
            replace_differing: false,
        }
    }

    /// Also syncs the indexes of model `T` (useful after [`Odm::sync_indexes_of`]).
    pub fn and<T: Model>(mut self) -> Self {
        match self.targets.iter_mut().find(|(c, _)| c == T::COLLECTION) {
            Some((_, existing)) => merge(existing, T::indexes()),
            None => self.targets.push((T::COLLECTION.to_owned(), T::indexes())),
        }
        self
    }

    /// Drops indexes that no model declares (off by default: they are only reported).
    pub fn drop_extra(mut self, yes: bool) -> Self {
        self.drop_extra = yes;
        self
    }

    /// Drops and recreates indexes whose definition differs from the declaration (off by
    /// default: they are only reported).
    pub fn replace_differing(mut self, yes: bool) -> Self {
        self.replace_differing = yes;
        self
    }

    async fn run(self) -> Result<SyncReport> {
        let mut report = SyncReport::default();
        let mut targets = self.targets;
        targets.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<String> = targets.iter().map(|(c, _)| c.clone()).collect();
        let mut progress = self.odm.track(
            crate::progress::Task::Sync,
            crate::progress::Unit::Collections,
            || "indexes".to_owned(),
            Some(targets.len() as u64),
        );
        for (collection, specs) in targets {
            crate::counters::series::ensure(self.odm, &collection).await?;
            let existing = list_indexes(self.odm, &collection).await?;
            report.collections.push(
                sync_collection(
                    self.odm,
                    &collection,
                    &specs,
                    existing,
                    self.drop_extra,
                    self.replace_differing,
                )
                .await?,
            );
            progress.advance(1);
        }
        progress.finish();
        // After the indexes, the shard keys' among them: `shardCollection` needs its index.
        if report.failures().is_empty() {
            report.sharding = crate::shard::sync::shard_collections(self.odm, &names).await?;
        }
        if report.failures().is_empty() {
            Ok(report)
        } else {
            Err(Error::IndexSync(Box::new(report)))
        }
    }
}

fn merge(into: &mut Vec<IndexSpec>, more: Vec<IndexSpec>) {
    for s in more {
        if !into.iter().any(|e| e.name() == s.name()) {
            into.push(s);
        }
    }
}

impl<'a> IntoFuture for SyncIndexes<'a> {
    type Output = Result<SyncReport>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("sync_indexes", "*");
        crate::trace::boxed(span, self.run(), |r: &SyncReport| {
            Some(r.collections.len() as u64)
        })
    }
}

const NAMESPACE_NOT_FOUND: i32 = 26;

/// The collection's indexes as `listIndexes` returns them (none when it does not exist); a
/// reply without its batch is an error, not an empty list.
pub(crate) async fn list_indexes(odm: &Odm, collection: &str) -> Result<Vec<Document>> {
    let reply = odm
        .own_database()
        .run_command(doc! { "listIndexes": collection })
        .await;
    let reply = match reply {
        Ok(r) => r,
        Err(e) if matches!(&*e.kind, mongodb::error::ErrorKind::Command(c) if c.code == NAMESPACE_NOT_FOUND) => {
            return Ok(Vec::new())
        }
        Err(e) => return Err(Error::from_driver(collection, e)),
    };
    let batch = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .map_err(|e| Error::Encode {
            collection: collection.to_owned(),
            what: "listIndexes reply".to_owned(),
            message: e.to_string(),
        })?;
    Ok(batch
        .iter()
        .filter_map(|b| b.as_document().cloned())
        .collect())
}

/// The existing index a declared one is: the one of its name, else one of its keys and
/// partial filter (not `_id_`). Two indexes of the same keys and other partial filters are two
/// indexes (the kinds of one collection, each with its own on the same field): one is never
/// taken for the other.
fn existing_index<'e>(
    existing: &'e [Document],
    spec: &IndexSpec,
    name: &str,
) -> Option<&'e Document> {
    let declared_keys = normalized_keys(&spec.key_document(), None);
    existing
        .iter()
        .find(|e| e.get_str("name").ok() == Some(name))
        .or_else(|| {
            existing.iter().find(|e| {
                normalized_keys(
                    e.get_document("key").unwrap_or(&Document::new()),
                    e.get_document("weights").ok(),
                ) == declared_keys
                    && e.get_document("partialFilterExpression").ok() == spec.partial.as_ref()
                    && e.get_str("name").ok() != Some("_id_")
            })
        })
}

async fn sync_collection(
    odm: &Odm,
    collection: &str,
    specs: &[IndexSpec],
    existing: Vec<Document>,
    drop_extra: bool,
    replace_differing: bool,
) -> Result<CollectionSync> {
    let mut out = CollectionSync {
        collection: collection.to_owned(),
        ..CollectionSync::default()
    };
    let mut to_create: Vec<&IndexSpec> = Vec::new();
    let mut to_drop: Vec<String> = Vec::new();
    let mut matched: BTreeSet<String> = BTreeSet::new();
    for spec in specs {
        let name = spec.name();
        match existing_index(&existing, spec, &name) {
            None => to_create.push(spec),
            Some(e) => {
                let found_name = e.get_str("name").unwrap_or_default().to_owned();
                matched.insert(found_name.clone());
                let mut differences = spec.differences(e);
                if found_name != name {
                    differences.insert(0, format!("name: declared {name}, found {found_name}"));
                }
                if differences.is_empty() {
                    out.unchanged.push(name);
                } else {
                    if replace_differing {
                        to_drop.push(found_name);
                        to_create.push(spec);
                    }
                    out.differing.push(IndexDiff {
                        name,
                        differences,
                        replaced: replace_differing,
                    });
                }
            }
        }
    }
    for e in &existing {
        let name = e.get_str("name").unwrap_or_default();
        if name != "_id_" && !matched.contains(name) {
            out.extra.push(name.to_owned());
            if drop_extra {
                to_drop.push(name.to_owned());
            }
        }
    }
    for name in &to_drop {
        odm.own_database()
            .run_command(doc! { "dropIndexes": collection, "index": name.as_str() })
            .await
            .map_err(|e| Error::from_driver(collection, e))?;
        if out.extra.contains(name) {
            out.dropped.push(name.clone());
        }
    }
    if !to_create.is_empty() {
        let indexes: Vec<Document> = to_create.iter().map(|s| s.to_document()).collect();
        let all = create_indexes(odm, collection, indexes).await;
        let created: Vec<&IndexSpec> = match all {
            Ok(()) => to_create,
            Err(_) => {
                // Find out which ones the server refuses, creating the rest.
                let mut created = Vec::new();
                for spec in to_create {
                    match create_indexes(odm, collection, vec![spec.to_document()]).await {
                        Ok(()) => created.push(spec),
                        Err(message) => out.failed.push(IndexFailure {
                            name: spec.name(),
                            message,
                        }),
                    }
                }
                created
            }
        };
        out.created = created
            .iter()
            .filter(|s| !out.differing.iter().any(|d| d.name == s.name()))
            .map(|s| s.name())
            .collect();
    }
    Ok(out)
}

async fn create_indexes(odm: &Odm, collection: &str, indexes: Vec<Document>) -> Result<(), String> {
    odm.own_database()
        .run_command(doc! { "createIndexes": collection, "indexes": indexes })
        .await
        .map(|_| ())
        .map_err(|e| match &*e.kind {
            mongodb::error::ErrorKind::Command(c) => c.message.clone(),
            _ => e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_follow_mongodb() {
        let s = IndexSpec::on("book", IndexKey::Asc).then("user", IndexKey::Desc);
        assert_eq!(s.name(), "book_1_user_-1");
        assert_eq!(IndexSpec::on("title", IndexKey::Text).name(), "title_text");
    }

    #[test]
    fn text_keys_compare_with_what_the_server_lists() {
        let spec = IndexSpec::on("title", IndexKey::Text);
        let listed = doc! {
            "key": {"_fts": "text", "_ftsx": 1},
            "name": "title_text",
            "weights": {"title": 1},
        };
        assert!(spec.differences(&listed).is_empty());
    }

    #[test]
    fn number_types_do_not_count_as_differences() {
        let spec = IndexSpec::on("slug", IndexKey::Asc).unique();
        let listed = doc! { "key": {"slug": 1.0}, "name": "slug_1", "unique": true };
        assert!(spec.differences(&listed).is_empty());
        let not_unique = doc! { "key": {"slug": 1i64}, "name": "slug_1" };
        assert_eq!(
            spec.differences(&not_unique),
            vec!["unique: declared true, found false"]
        );
    }
}
