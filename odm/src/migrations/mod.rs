//! Schema versions and migrations.
//!
//! A model declaring `#[odm(schema_version = N)]` stores `_v: N` in every document the ODM
//! inserts or replaces; with `upgrade = "path::to::fn"` too, a document read with an older
//! `_v` (or none, which is version 1) is upgraded in memory, one version at a time, before it
//! is decoded. [`Migrations`] runs ordered, recorded, once-only steps over the database.

mod run;

pub use run::{MigrationReport, Migrations};

pub use crate::catalog::{SchemaVersion, VERSION_FIELD};
