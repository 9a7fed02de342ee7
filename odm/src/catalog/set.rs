//! The catalog of models a handle works with: which collections copy from which, which
//! reference which, which are sharded or time series. Every write looks its maintenance up
//! here, so that what an [`Odm`](crate::Odm) does depends on the models it was given, not on
//! what else happens to be linked into the program.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use super::{CopyInfo, ModelEntry, ReferenceInfo, ShardKey, TimeSeriesEntry};
use crate::Model;

/// The models an [`Odm`](crate::Odm) works with, indexed once for the lookups of every write
/// (one hash lookup per collection, never a scan of the models).
///
/// By default a handle works with [every model linked into the program](Catalog::linked),
/// which is what an application wants. Name them with [`Catalog::new`] and [`Catalog::with`]
/// (then [`Odm::with_catalog`](crate::Odm::with_catalog)) when one process holds several
/// applications, or several tests, whose models must not act on each other's writes:
///
/// ```
/// # #[derive(serde::Serialize, serde::Deserialize, odm::Model)]
/// # #[odm(collection = "parts")]
/// # struct Part { #[serde(rename = "_id")] id: i32, name: String }
/// let catalog = odm::Catalog::new().with::<Part>();
/// assert_eq!(catalog.models().len(), 1);
/// assert!(catalog.copies_from("parts").is_empty());
/// ```
///
/// What the catalog decides: the copies a write fills and cascades, the delete rules and
/// latest-N arrays a delete applies, the references populate and the sweeps follow, and what
/// `sync_indexes`, `sync_validators`, `sync_sharding` and the routing report cover. A model
/// outside the handle's catalog can still be read and written through it: as a plain model,
/// with none of the other models' maintenance.
#[derive(Debug, Default)]
pub struct Catalog {
    models: Vec<&'static ModelEntry>,
    copies: Vec<CopyInfo>,
    copies_from: HashMap<&'static str, Vec<CopyInfo>>,
    copies_into: HashMap<&'static str, Vec<CopyInfo>>,
    references_to: HashMap<&'static str, Vec<ReferenceInfo>>,
    shard_keys: HashMap<&'static str, ShardKey>,
    time_series: HashMap<&'static str, &'static TimeSeriesEntry>,
    /// The collections a copy or a reference involves (as source, holder or target).
    related: HashSet<&'static str>,
    /// The collections whose documents are the children of a two-way reference (they name
    /// their parent, whose array lists them), declared on either side.
    two_way_children: HashSet<&'static str>,
    /// What the copies' cycle check found, computed on first use (see `denormalize`).
    pub(crate) copy_cycle: OnceLock<Option<Vec<String>>>,
}

impl Catalog {
    /// An empty catalog: add models with [`Catalog::with`].
    pub fn new() -> Self {
        Catalog::default()
    }

    /// Every model linked into the program (registered by the derive), built once per process;
    /// the catalog of [`Odm::new`](crate::Odm::new) and [`Odm::connect`](crate::Odm::connect).
    pub fn linked() -> Arc<Catalog> {
        static LINKED: OnceLock<Arc<Catalog>> = OnceLock::new();
        Arc::clone(
            LINKED.get_or_init(|| Arc::new(Catalog::of(super::registered_models().into_iter()))),
        )
    }

    /// Every linked model declared in `module` or in a module inside it (`module_path!()`
    /// names the caller's own): the models of one application, or of one test file, in a
    /// program that links several.
    ///
    /// ```
    /// mod shop {
    ///     # #[derive(serde::Serialize, serde::Deserialize, odm::Model)]
    ///     # #[odm(collection = "parts")]
    ///     pub struct Part { #[serde(rename = "_id")] id: i32, name: String }
    /// }
    /// let here = module_path!();
    /// let catalog = odm::Catalog::linked_in(&format!("{here}::shop"));
    /// assert_eq!(catalog.models().len(), 1);
    /// assert_eq!(catalog.models()[0].collection, "parts");
    /// ```
    pub fn linked_in(module: &str) -> Self {
        Catalog::of(super::registered_models().into_iter().filter(|e| {
            e.module
                .strip_prefix(module)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        }))
    }

    /// The catalog of `entries`.
    fn of(entries: impl Iterator<Item = &'static ModelEntry>) -> Self {
        entries.fold(Catalog::new(), Catalog::add)
    }

    /// The same catalog with the model `T` too (once, however often it is named).
    pub fn with<T: Model>(self) -> Self {
        self.add(T::entry())
    }

    fn add(mut self, entry: &'static ModelEntry) -> Self {
        if self.models.iter().any(|m| std::ptr::eq(*m, entry)) {
            return self;
        }
        self.models.push(entry);
        self.models.sort_by_key(|e| (e.collection, e.type_name));
        for c in (entry.copies)() {
            self.related.extend([c.source, c.dependent]);
            self.copies_from
                .entry(c.source)
                .or_default()
                .push(c.clone());
            self.copies_into
                .entry(c.dependent)
                .or_default()
                .push(c.clone());
            self.copies.push(c);
        }
        for r in (entry.references)() {
            self.related.insert(r.to);
            if let (Some(_), None) = (&r.inverse, r.dbref) {
                // The array's side names the children's collection, the reference's its own.
                let child = if r.kind == super::RefKind::Many {
                    r.to
                } else {
                    r.from
                };
                self.two_way_children.insert(child);
            }
            self.references_to.entry(r.to).or_default().push(r);
        }
        if let Some(key) = entry.shard_key {
            self.shard_keys.entry(entry.collection).or_insert(key);
        }
        if let Some(series) = &entry.time_series {
            self.time_series.entry(entry.collection).or_insert(series);
        }
        self.copy_cycle = OnceLock::new();
        self
    }

    /// The models, sorted by collection, then type name.
    pub fn models(&self) -> &[&'static ModelEntry] {
        &self.models
    }

    /// The model stored in `collection` named `type_name`, or, without a name, the first of
    /// the collection's models (by type name): a binary search of the sorted models.
    pub(crate) fn entry_of(
        &self,
        collection: &str,
        type_name: Option<&str>,
    ) -> Option<&'static ModelEntry> {
        let start = self.models.partition_point(|m| m.collection < collection);
        let mut here = self.models[start..]
            .iter()
            .take_while(|m| m.collection == collection);
        match type_name {
            None => here.next().copied(),
            Some(name) => here.find(|m| m.type_name == name).copied(),
        }
    }

    /// Every copy (`#[denormalize]` field) of the catalog's models.
    pub fn copies(&self) -> &[CopyInfo] {
        &self.copies
    }

    /// Every copy taken from `source`.
    pub fn copies_from(&self, source: &str) -> &[CopyInfo] {
        self.copies_from.get(source).map_or(&[], Vec::as_slice)
    }

    /// Every copy held by documents of `dependent`.
    pub fn copies_into(&self, dependent: &str) -> &[CopyInfo] {
        self.copies_into.get(dependent).map_or(&[], Vec::as_slice)
    }

    /// Whether a copy or a reference of the catalog's models involves `collection`: copied
    /// from it, held by its documents, or pointing into it.
    pub(crate) fn is_related(&self, collection: &str) -> bool {
        !self.related.is_empty() && self.related.contains(collection)
    }

    /// Whether the documents of `collection` are the children of a two-way reference: they
    /// name a parent whose array lists them, which the ODM's writes of them keep.
    pub(crate) fn holds_two_way_child(&self, collection: &str) -> bool {
        !self.two_way_children.is_empty() && self.two_way_children.contains(collection)
    }

    /// Every reference into `collection`.
    pub fn references_to(&self, collection: &str) -> &[ReferenceInfo] {
        self.references_to
            .get(collection)
            .map_or(&[], Vec::as_slice)
    }

    /// The shard key declared for `collection` by one of the catalog's models.
    pub fn shard_key_of(&self, collection: &str) -> Option<ShardKey> {
        self.shard_keys.get(collection).copied()
    }

    /// The catalog's sharded models, sorted by collection.
    pub fn sharded(&self) -> impl Iterator<Item = (&'static ModelEntry, ShardKey)> + '_ {
        self.models.iter().filter_map(|m| Some((*m, m.shard_key?)))
    }

    /// The time-series declaration of `collection` by one of the catalog's models.
    pub fn time_series(&self, collection: &str) -> Option<&'static TimeSeriesEntry> {
        self.time_series.get(collection).copied()
    }
}
