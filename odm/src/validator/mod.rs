//! `$jsonSchema` validators generated from the models, and `sync_validators`.
//!
//! Each model's derive describes its documents as a `$jsonSchema` ([`Validated::json_schema`]):
//! its stored fields and their BSON types, `required` for every field serde always writes,
//! embedded types as nested object schemas, array bounds (`max = N`) as `maxItems`, and for an
//! enum of kinds a `oneOf` over the kinds keyed by the discriminator. [`Odm::sync_validators`]
//! installs them: it creates what is missing and reports, never silently replaces, a validator
//! that differs.
//!
//! [`Odm::sync_validators`]: crate::Odm::sync_validators

mod diff;
mod schema;
mod sync;

use bson::{doc, Document};

pub use crate::catalog::{nullable, FieldSchema, Schema};
pub use schema::{kinds_schema, BsonSchema};
#[doc(hidden)]
pub use schema::{RefIdOf, SchemaOf, UnknownSchema};
pub use sync::{SyncValidators, ValidationLevel, ValidatorOutcome, ValidatorReport, ValidatorSync};

/// A model whose documents the derive describes as a `$jsonSchema`; implemented by
/// `#[derive(Model)]`.
pub trait Validated {
    /// The schema of one document of this type, as data: the derive emits it as a constant
    /// (an object schema of the stored fields), which the registry of models points at.
    const SCHEMA: Schema;

    /// The schema of one document of this type (an object schema).
    fn json_schema() -> Document {
        Self::SCHEMA.document()
    }

    /// The validator for the model's collection: `{$jsonSchema: ...}`. For a kind of an enum of
    /// kinds, the enum's, since the kinds share the collection.
    fn validator() -> Document {
        validator_of(&Self::SCHEMA)
    }
}

/// `{$jsonSchema: ...}` of a model's schema.
pub(crate) fn validator_of(schema: &Schema) -> Document {
    doc! { "$jsonSchema": schema.document() }
}
