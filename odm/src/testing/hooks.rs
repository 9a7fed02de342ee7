//! The client-side steps of the hot paths, without a server, for benchmarks that measure what
//! the ODM adds to the driver's own work.

use bson::{RawDocument, RawDocumentBuf};

use crate::{Model, Result};

/// The document `insert_one` would send for `doc`: serialized once, keys checked, `_id` added
/// when the library generates it. Sends nothing.
pub fn encode_for_insert<T: Model>(doc: &T) -> Result<RawDocumentBuf> {
    crate::ops::encode_document(doc).map(|(raw, _)| raw)
}

/// A database documents are read from, as a handle knows it (made once per handle, not per
/// document).
#[derive(Debug, Clone, Copy)]
pub struct Database(crate::decode::DbName);

impl Database {
    /// The database named `name`.
    pub fn named(name: &str) -> Self {
        Database(crate::decode::DbName::of(name))
    }
}

/// `raw` decoded as `find` decodes a document of `T` read from `database`. Sends nothing.
#[inline]
pub fn decode<T: Model>(database: Database, raw: &RawDocument) -> Result<T> {
    crate::decode::decode(
        &crate::decode::Reading {
            collection: T::COLLECTION,
            database: database.0,
            kinds: T::entry().kinds,
            version: T::SCHEMA_VERSION,
        },
        raw,
    )
}
