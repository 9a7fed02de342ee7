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

pub use schema::{kinds_schema, nullable, BsonSchema, ObjectSchema};
#[doc(hidden)]
pub use schema::{KnownSchema, RefIdOf, SchemaOf, UnknownSchema};
pub use sync::{SyncValidators, ValidationLevel, ValidatorOutcome, ValidatorReport, ValidatorSync};

/// A model whose documents the derive describes as a `$jsonSchema`; implemented by
/// `#[derive(Model)]`.
pub trait Validated {
    /// The schema of one document of this type (an object schema).
    fn json_schema() -> Document;

    /// The validator for the model's collection: `{$jsonSchema: ...}`. For a kind of an enum of
    /// kinds, the enum's, since the kinds share the collection.
    fn validator() -> Document {
        doc! { "$jsonSchema": Self::json_schema() }
    }
}
