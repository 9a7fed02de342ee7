//! What the derive emits: the descriptions of every model linked into the program, of its
//! indexes, of its references and of its copies. This module is at the bottom of the crate:
//! the behaviour modules (index sync, populate, delete rules, cascades) read it, and it reads
//! none of them.

mod copies;
mod index;
mod references;
mod shard;
mod stamps;
mod tree;

pub use copies::{all_copies, copies_from, copies_into, sub_path, CopyInfo, CopyKind, ValueCheck};
pub use index::{IndexKey, IndexSpec};
pub use references::{references_to, OnDelete, RefKind, ReferenceInfo};
pub use shard::{shard_key_of, sharded_models, Segment, ShardEntry, ShardKey, ShardOrder};
pub use stamps::Stamps;
pub use tree::{DeleteRule, TreeInfo};

/// What the registry knows of each model linked into the program.
#[doc(hidden)]
#[derive(Debug)]
pub struct ModelEntry {
    pub type_name: &'static str,
    pub collection: &'static str,
    pub indexes: fn() -> Vec<IndexSpec>,
    pub references: fn() -> Vec<ReferenceInfo>,
    pub copies: fn() -> Vec<CopyInfo>,
    /// The validator `sync_validators` installs on the collection, if it installs one.
    pub validator: Option<&'static crate::validator::Schema>,
}

inventory::collect!(ModelEntry);

/// Every model linked into the program, without a registration step: the derive registers
/// each one. Sorted by collection, then type name.
pub fn registered_models() -> Vec<&'static ModelEntry> {
    let mut all: Vec<_> = inventory::iter::<ModelEntry>.into_iter().collect();
    all.sort_by_key(|e| (e.collection, e.type_name));
    all
}
