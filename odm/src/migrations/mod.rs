//! Schema versions and migrations.
//!
//! A model declaring `#[odm(schema_version = N)]` stores `_v: N` in every document the ODM
//! inserts or replaces; with `upgrade = "path::to::fn"` too, a document read with an older
//! `_v` (or none, which is version 1) is upgraded in memory, one version at a time, before it
//! is decoded. [`Migrations`] runs ordered, recorded, once-only steps over the database, says
//! beforehand which would run ([`Migrations::plan`]), and undoes the last one applied when it
//! declares a down step ([`Migrations::revert`]).

mod revert;
mod run;

use std::time::Duration;

pub use revert::MigrationPlan;
pub use run::{MigrationReport, Migrations};

pub use crate::catalog::{SchemaVersion, VERSION_FIELD};

/// One migration run (or reverted) by this process: how long it took and the documents it
/// changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MigrationRun {
    /// The migration's version.
    pub version: u32,
    /// Its name.
    pub name: String,
    /// The time its step took (the records' commands aside).
    pub elapsed: Duration,
    /// The documents it changed, as its step returned them ([`Changed`]); `None` for a step
    /// that returns `()`.
    pub documents: Option<u64>,
}

/// What a migration's step returns: nothing (`()`), or the documents it changed, which
/// [`MigrationReport::runs`] and the console show beside its time and the record keeps
/// (`documents`). A step returns the driver's result of its write as it is
/// (`Ok(coll.update_many(..).await?)`), or a count it adds up itself (`u64`).
pub trait Changed: Send + 'static {
    /// The documents changed, when known.
    fn documents(&self) -> Option<u64>;
}

impl Changed for () {
    fn documents(&self) -> Option<u64> {
        None
    }
}

impl Changed for u64 {
    fn documents(&self) -> Option<u64> {
        Some(*self)
    }
}

impl Changed for Option<u64> {
    fn documents(&self) -> Option<u64> {
        *self
    }
}

impl Changed for mongodb::results::UpdateResult {
    fn documents(&self) -> Option<u64> {
        Some(self.modified_count)
    }
}

impl Changed for mongodb::results::DeleteResult {
    fn documents(&self) -> Option<u64> {
        Some(self.deleted_count)
    }
}

impl Changed for mongodb::results::InsertManyResult {
    fn documents(&self) -> Option<u64> {
        Some(self.inserted_ids.len() as u64)
    }
}

/// The records of migrations (`odm_migrations`), read with the driver and written through
/// the ODM's own writes: each write one command, failures naming the collection and the
/// record.
pub(crate) struct Records<'a> {
    odm: &'a crate::Odm,
    /// The collection, for reads.
    pub(crate) read: mongodb::Collection<bson::Document>,
}

impl<'a> Records<'a> {
    pub(crate) fn of(odm: &'a crate::Odm) -> Self {
        Records {
            odm,
            read: odm.own_database().collection(run::MIGRATIONS_COLLECTION),
        }
    }

    /// One `update` of the first record `filter` matches.
    pub(crate) async fn update(
        &self,
        filter: bson::Document,
        update: bson::Document,
    ) -> crate::Result<crate::engine::Written> {
        use crate::engine::{Effect, Own};
        let write = Own::update(
            run::MIGRATIONS_COLLECTION,
            filter,
            update,
            Effect::Derived,
            "migration record",
        );
        self.odm.write_own(write.one(), None).await
    }

    /// One `insert` of `record`.
    pub(crate) async fn insert(&self, record: bson::Document) -> crate::Result<()> {
        let write =
            crate::engine::Own::insert(run::MIGRATIONS_COLLECTION, record, "migration record");
        self.odm.write_own(write, None).await.map(|_| ())
    }

    /// One `delete` of the first record `filter` matches: whether it deleted one.
    pub(crate) async fn delete(&self, filter: bson::Document) -> crate::Result<bool> {
        let write =
            crate::engine::Own::delete(run::MIGRATIONS_COLLECTION, filter, "migration record");
        Ok(self.odm.write_own(write.one(), None).await?.matched == 1)
    }
}
