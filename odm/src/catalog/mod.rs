//! What the derive emits: the descriptions of every model linked into the program, of its
//! indexes, of its references and of its copies, and the [`Catalog`] of models a handle works
//! with, indexed for the lookups of every write. This module is below the features: the
//! behaviour modules (index sync, populate, delete rules, cascades) read it, and it reads none
//! of them.

mod copies;
mod defaults;
mod index;
mod references;
mod routing;
mod schema;
mod set;
mod shard;
mod shard_values;
mod stamps;
mod time_series;
mod tree;
mod version;

pub use copies::{sub_path, CopyInfo, CopyKind, ValueCheck};
pub use defaults::{Acknowledged, Defaults, ReadMode};
pub(crate) use index::default_index_name;
pub use index::{IndexKey, IndexSpec};
pub use references::{OnDelete, OnSoftDelete, RefKind, ReferenceInfo};
pub use routing::RouteVerdict;
pub(crate) use routing::{unpinned, verdict_for, KeyCarrier};
pub use schema::{nullable, FieldSchema, Schema};
pub use set::Catalog;
pub use shard::{Segment, ShardKey, ShardOrder};
pub(crate) use shard_values::{fill_segment, pin_key};
pub use stamps::Stamps;
pub use time_series::TimeSeriesEntry;
pub use tree::{DeleteRule, TreeInfo};
pub use version::{SchemaVersion, VERSION_FIELD};

/// What the registry knows of each model linked into the program.
#[doc(hidden)]
#[derive(Debug)]
pub struct ModelEntry {
    pub type_name: &'static str,
    /// The module that declares the model (`module_path!()` where the derive ran).
    pub module: &'static str,
    pub collection: &'static str,
    pub indexes: fn() -> Vec<IndexSpec>,
    pub references: fn() -> Vec<ReferenceInfo>,
    pub copies: fn() -> Vec<CopyInfo>,
    /// The validator `sync_validators` installs on the collection, if it installs one.
    pub validator: Option<&'static Schema>,
    /// Its shard key (`#[odm(shard_key(...))]`), if sharded.
    pub shard_key: Option<ShardKey>,
    /// Its time-series collection (`#[odm(time_series(...))]`), if stored in one.
    pub time_series: Option<TimeSeriesEntry>,
    /// The stored name of the field a delete sets instead of removing the document
    /// (`#[odm(soft_delete)]`), if deletes are soft.
    pub soft_delete: Option<&'static str>,
    /// For a kind of an enum of kinds (`#[odm(kind_of = "Book")]`): its discriminator, which
    /// every filter of the kind includes and every insert stores.
    pub kind: Option<crate::kind::Kind>,
    /// For an enum of kinds: the discriminator field and its values.
    pub kinds: Option<crate::kind::Kinds>,
    /// For a tree of documents (`#[odm(tree)]`): its parent and ancestors fields, and its
    /// delete rule.
    pub tree: Option<TreeInfo>,
    /// The fields every write keeps (version, timestamps), by stored name.
    pub stamps: Stamps,
    /// The schema version its documents are written with (`#[odm(schema_version = N)]`).
    pub schema_version: Option<SchemaVersion>,
    /// Its bounded arrays, `(path, bound)`: writes of a whole array and pushes of several
    /// elements onto them are checked against it before sending.
    pub bounds: fn() -> &'static [(&'static str, u32)],
    /// For the details of a subset pair (`#[odm(subset_of = "Movie")]`): the main model's type
    /// name, whose entry has it as its `type_name`.
    pub subset_of: Option<&'static str>,
    /// Its defaults for its operations (`#[odm(read_preference = ..., write_concern = ...)]`).
    pub defaults: Defaults,
}

impl ModelEntry {
    /// No bounded array.
    pub const NO_BOUNDS: fn() -> &'static [(&'static str, u32)] = || &[];

    /// An entry that names nothing and declares nothing: the rest of an entry written by hand
    /// (`ModelEntry { collection: "logs", ..ModelEntry::NONE }`).
    pub const NONE: ModelEntry = ModelEntry {
        type_name: "",
        module: "",
        collection: "",
        indexes: Vec::new,
        references: Vec::new,
        copies: Vec::new,
        validator: None,
        shard_key: None,
        time_series: None,
        soft_delete: None,
        kind: None,
        kinds: None,
        tree: None,
        stamps: Stamps::NONE,
        schema_version: None,
        bounds: ModelEntry::NO_BOUNDS,
        subset_of: None,
        defaults: Defaults::NONE,
    };
}

inventory::collect!(ModelEntry);

/// The entry of a model the derive refused (it emits a stand-in `Model` impl so that the
/// errors are the derive's alone); never registered.
#[doc(hidden)]
pub fn unregistered_entry() -> &'static ModelEntry {
    &ModelEntry::NONE
}

/// Every model linked into the program, without a registration step: the derive registers
/// each one. Sorted by collection, then type name. The models an [`Odm`](crate::Odm) works
/// with are those of its [`Catalog`]: by default, these.
pub fn registered_models() -> Vec<&'static ModelEntry> {
    let mut all: Vec<_> = inventory::iter::<ModelEntry>.into_iter().collect();
    all.sort_by_key(|e| (e.collection, e.type_name));
    all
}
