//! Schema versions and migrations.
//!
//! A model declaring `#[odm(schema_version = N)]` stores `_v: N` in every document the ODM
//! inserts or replaces; with `upgrade = "path::to::fn"` too, a document read with an older
//! `_v` (or none, which is version 1) is upgraded in memory, one version at a time, before it
//! is decoded. [`Migrations`] runs ordered, recorded, once-only steps over the database.

mod migrations;
mod upgrade;

pub use migrations::{MigrationReport, Migrations};
pub(crate) use upgrade::upgraded;

/// The field holding a document's schema version.
pub const VERSION_FIELD: &str = "_v";

/// A model's declared schema version (`#[odm(schema_version = 2, upgrade = "...")]`).
#[derive(Debug, Clone, Copy)]
pub struct SchemaVersion {
    /// The version the model's documents are written with.
    pub current: u32,
    /// Brings a stored document from version `from` to `from + 1`, in place; called once per
    /// version between the stored one and `current`. An `Err` is the reason it cannot.
    #[allow(clippy::type_complexity)]
    pub upgrade: Option<fn(from: u32, doc: &mut bson::Document) -> Result<(), String>>,
}
