//! The `$jsonSchema` of a Rust type: what the derive asks of each field's type, and the
//! helpers that assemble a struct's object schema.

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

use bson::oid::ObjectId;
use bson::{doc, Bson, Document};

use crate::reference::{Ref, RefTarget};

/// A type whose stored BSON shape can be described by a `$jsonSchema`.
///
/// Implemented for the primitive types, `String`, `ObjectId`, `bson::DateTime`, `Document`,
/// `Option`, `Vec`, `Box`, maps with string keys, `Ref<T>` (as `T`'s id), and by
/// `#[derive(Embed)]` for embedded types. A field whose type does not implement it is stored
/// without a constraint on its value (it stays required unless it is an `Option`). Implement it
/// for a type of your own (an enum stored as strings, say) to constrain the fields holding it.
pub trait BsonSchema {
    /// The schema of one value (`{bsonType: "string"}`).
    fn bson_schema() -> Document;
}

fn types(names: &[&str]) -> Document {
    match names {
        [one] => doc! { "bsonType": *one },
        many => doc! { "bsonType": many.iter().map(|n| Bson::from(*n)).collect::<Vec<_>>() },
    }
}

macro_rules! schema {
    ($($t:ty => $names:expr),* $(,)?) => {
        $(impl BsonSchema for $t {
            fn bson_schema() -> Document {
                types($names)
            }
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
    fn bson_schema() -> Document {
        T::bson_schema()
    }
}

impl<T: BsonSchema> BsonSchema for Option<T> {
    fn bson_schema() -> Document {
        nullable(T::bson_schema())
    }
}

impl<T: BsonSchema> BsonSchema for Vec<T> {
    fn bson_schema() -> Document {
        doc! { "bsonType": "array", "items": T::bson_schema() }
    }
}

impl<V: BsonSchema, S> BsonSchema for HashMap<String, V, S> {
    fn bson_schema() -> Document {
        doc! { "bsonType": "object", "additionalProperties": V::bson_schema() }
    }
}

impl<V: BsonSchema> BsonSchema for BTreeMap<String, V> {
    fn bson_schema() -> Document {
        doc! { "bsonType": "object", "additionalProperties": V::bson_schema() }
    }
}

/// A reference is stored as the target's id.
impl<T: RefTarget> BsonSchema for Ref<T>
where
    T::Id: BsonSchema,
{
    fn bson_schema() -> Document {
        T::Id::bson_schema()
    }
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
    fn bson_schema() -> Document {
        T::Id::bson_schema()
    }
}

/// `schema` or `null`.
pub fn nullable(mut schema: Document) -> Document {
    match schema.get("bsonType").cloned() {
        Some(Bson::String(t)) if schema.len() == 1 => {
            schema.insert("bsonType", vec![Bson::from(t), Bson::from("null")]);
            schema
        }
        Some(Bson::Array(mut ts)) if schema.len() == 1 => {
            ts.push(Bson::from("null"));
            schema.insert("bsonType", ts);
            schema
        }
        _ => doc! { "anyOf": [{ "bsonType": "null" }, schema] },
    }
}

/// Picks a field type's schema at compile time by method-call autoref:
/// `(&SchemaOf::<T>::NEW).schema()` is `Some` when `T: BsonSchema`, `None` (no constraint)
/// otherwise, so that a field of a type without a schema still compiles.
#[doc(hidden)]
#[derive(Debug)]
pub struct SchemaOf<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> SchemaOf<T> {
    pub const NEW: Self = SchemaOf(PhantomData);
}

#[doc(hidden)]
pub trait KnownSchema {
    fn schema(&self) -> Option<Document>;
}

impl<T: BsonSchema + ?Sized> KnownSchema for SchemaOf<T> {
    fn schema(&self) -> Option<Document> {
        Some(T::bson_schema())
    }
}

#[doc(hidden)]
pub trait UnknownSchema {
    fn schema(&self) -> Option<Document>;
}

impl<T: ?Sized> UnknownSchema for &SchemaOf<T> {
    fn schema(&self) -> Option<Document> {
        None
    }
}

/// The object schema of a struct, built field by field by the derive.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct ObjectSchema {
    required: Vec<Bson>,
    properties: Document,
}

impl ObjectSchema {
    pub fn new() -> Self {
        ObjectSchema::default()
    }

    /// A stored field: `required` unless serde may leave it out (an `Option`, a field skipped
    /// when empty); `schema` is `None` for a type without one; `max_items` is the declared
    /// array bound.
    pub fn field(
        mut self,
        name: &str,
        required: bool,
        schema: Option<Document>,
        max_items: Option<u32>,
    ) -> Self {
        if required {
            self.required.push(Bson::from(name));
        }
        let mut schema = schema.unwrap_or_default();
        if let Some(max) = max_items {
            bound(&mut schema, max);
        }
        if !schema.is_empty() {
            self.properties.insert(name, schema);
        }
        self
    }

    /// A field serde always writes ([`field`](Self::field), required, unbounded).
    pub fn req(self, name: &str, schema: Option<Document>) -> Self {
        self.field(name, true, schema, None)
    }

    /// A field serde may leave out ([`field`](Self::field), not required, unbounded).
    pub fn opt(self, name: &str, schema: Option<Document>) -> Self {
        self.field(name, false, schema, None)
    }

    pub fn finish(self) -> Document {
        let mut out = doc! { "bsonType": "object" };
        if !self.required.is_empty() {
            out.insert("required", self.required);
        }
        if !self.properties.is_empty() {
            out.insert("properties", self.properties);
        }
        out
    }
}

/// Adds `maxItems` to the array schema in `schema` (also inside a nullable `anyOf`).
fn bound(schema: &mut Document, max: u32) {
    if let Ok(any) = schema.get_array_mut("anyOf") {
        for s in any.iter_mut() {
            if let Bson::Document(d) = s {
                if d.get_str("bsonType").ok() == Some("array") {
                    d.insert("maxItems", i64::from(max));
                }
            }
        }
        return;
    }
    schema.insert("maxItems", i64::from(max));
}

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
