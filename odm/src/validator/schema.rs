//! The `$jsonSchema` of a Rust type: what the derive asks of each field's type, and the
//! helpers that assemble a struct's object schema.

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

use bson::oid::ObjectId;
use bson::{doc, Bson, Document};

use crate::catalog::Schema;
use crate::reference::{Ref, RefTarget};

/// A type whose stored BSON shape can be described by a `$jsonSchema`.
///
/// Implemented for the primitive types, `String`, `ObjectId`, `bson::DateTime`, `Document`,
/// `Option`, `Vec`, `Box`, maps with string keys, `Ref<T>` (as `T`'s id), and by
/// `#[derive(Embed)]` for embedded types. A field whose type does not implement it is stored
/// without a constraint on its value (it stays required unless it is an `Option`). Implement it
/// for a type of your own (an enum stored as strings, say) to constrain the fields holding it:
/// `const SCHEMA: Schema = Schema::Types(&["string"]);`, or [`Schema::Custom`] with a function
/// building any schema.
///
/// The schema is data (a constant), so that the derive describes a struct without generating
/// code to type-check per field. Embedded types are reached through [`Schema::Of`], so that a
/// type holding itself (a comment's replies) or types holding each other are described once
/// each, unconstrained inside themselves.
pub trait BsonSchema {
    /// The schema of one value.
    const SCHEMA: Schema;

    /// The schema of one value as a document (`{bsonType: "string"}`).
    fn bson_schema() -> Document {
        Self::SCHEMA.document()
    }
}

macro_rules! schema {
    ($($t:ty => $names:expr),* $(,)?) => {
        $(impl BsonSchema for $t {
            const SCHEMA: Schema = Schema::Types($names);
        })*
    };
}

// Integers are accepted as `int` or `long`: serde decodes either into any integer type that
// holds the value, and the driver writes a small `i64` as a `long` but another writer may not.
// Floats accept integers too, which decode into them.
schema! {
    String => &["string"],
    str => &["string"],
    bool => &["bool"],
    i8 => &["int", "long"],
    i16 => &["int", "long"],
    i32 => &["int", "long"],
    i64 => &["int", "long"],
    u8 => &["int", "long"],
    u16 => &["int", "long"],
    u32 => &["int", "long"],
    u64 => &["int", "long"],
    isize => &["int", "long"],
    usize => &["int", "long"],
    f32 => &["double", "int", "long"],
    f64 => &["double", "int", "long"],
    ObjectId => &["objectId"],
    bson::DateTime => &["date"],
    bson::Document => &["object"],
    bson::Decimal128 => &["decimal"],
    bson::Binary => &["binData"],
    bson::Timestamp => &["timestamp"],
}

impl<T: BsonSchema + ?Sized> BsonSchema for Box<T> {
    const SCHEMA: Schema = T::SCHEMA;
}

impl<T: BsonSchema> BsonSchema for Option<T> {
    const SCHEMA: Schema = Schema::Nullable(&T::SCHEMA);
}

impl<T: BsonSchema> BsonSchema for Vec<T> {
    const SCHEMA: Schema = Schema::Array(&T::SCHEMA);
}

impl<V: BsonSchema, S> BsonSchema for HashMap<String, V, S> {
    const SCHEMA: Schema = Schema::Map(&V::SCHEMA);
}

impl<V: BsonSchema> BsonSchema for BTreeMap<String, V> {
    const SCHEMA: Schema = Schema::Map(&V::SCHEMA);
}

/// A reference is stored as the target's id.
impl<T: RefTarget> BsonSchema for Ref<T>
where
    T::Id: BsonSchema,
{
    const SCHEMA: Schema = <T::Id as BsonSchema>::SCHEMA;
}

/// The schema of a `Ref<T>` named without `Ref`'s bound, so that a reference to a type that is
/// not a model (already an error at the field) has no schema rather than a second error.
#[doc(hidden)]
#[derive(Debug)]
pub struct RefIdOf<T: ?Sized>(PhantomData<T>);

impl<T: RefTarget> BsonSchema for RefIdOf<T>
where
    T::Id: BsonSchema,
{
    const SCHEMA: Schema = <T::Id as BsonSchema>::SCHEMA;
}

/// Picks a field type's schema at compile time: `SchemaOf::<T>::SCHEMA` is the inherent constant,
/// `Some(&T::SCHEMA)`, when `T: BsonSchema`, and otherwise [`UnknownSchema`]'s `None` (no
/// constraint), so that a field of a type without a schema still compiles. (An inherent
/// associated item whose impl does not apply is passed over for the trait's.)
#[doc(hidden)]
#[derive(Debug)]
pub struct SchemaOf<T: ?Sized>(PhantomData<T>);

impl<T: BsonSchema + ?Sized> SchemaOf<T> {
    pub const SCHEMA: Option<&'static Schema> = Some(&T::SCHEMA);
}

#[doc(hidden)]
pub trait UnknownSchema {
    const SCHEMA: Option<&'static Schema> = None;
}

impl<T: ?Sized> UnknownSchema for SchemaOf<T> {}

/// A kind's discriminator value and the function returning its schema.
pub type KindSchema = (&'static str, fn() -> Document);

/// The schema of an enum of kinds: the discriminator is one of the kinds' values and the
/// document matches exactly one kind's schema (`oneOf`, each branch pinning its value). With a
/// catch-all variant (`#[serde(other)]`) any value is read, so only a string is required.
pub fn kinds_schema(tag: &str, other: bool, kinds: &[KindSchema]) -> Document {
    if other {
        return doc! {
            "bsonType": "object",
            "required": [tag],
            "properties": { tag: { "bsonType": "string" } },
        };
    }
    let values: Vec<Bson> = kinds.iter().map(|(v, _)| Bson::from(*v)).collect();
    let branches: Vec<Bson> = kinds
        .iter()
        .map(|(value, schema)| {
            let mut s = schema();
            let mut props = s.get_document("properties").cloned().unwrap_or_default();
            props.insert(tag, doc! { "enum": [*value] });
            s.insert("properties", props);
            let mut required = s.get_array("required").cloned().unwrap_or_default();
            if !required.contains(&Bson::from(tag)) {
                required.insert(0, Bson::from(tag));
            }
            s.insert("required", required);
            Bson::Document(s)
        })
        .collect();
    doc! {
        "bsonType": "object",
        "required": [tag],
        "properties": { tag: { "enum": values } },
        "oneOf": branches,
    }
}
