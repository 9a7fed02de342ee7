//! A model's schema version, as the derive declares it (the upgrades run when decoding, the
//! migrations in `migrations`).

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
