//! The `$jsonSchema` of a Rust type: what the derive asks of each field's type, and the
//! helpers that assemble a struct's object schema.

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

use bson::oid::ObjectId;
use bson::{doc, Bson, Document};

use crate::reference::{Ref, RefTarget};

/// A value's `$jsonSchema` as data: what [`BsonSchema::SCHEMA`] holds and the derive emits for
/// a struct, without generated code to type-check or compile.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Schema {
    /// `{bsonType: "t"}`, or `{bsonType: [..]}` for several accepted types.
    Types(&'static [&'static str]),
    /// The schema or `null` (an `Option`).
    Nullable(&'static Schema),
    /// An array whose items have the schema (a `Vec`).
    Array(&'static Schema),
    /// An object whose values all have the schema (a map with string keys).
    Map(&'static Schema),
    /// A struct's object schema: its stored fields (`#[derive(Embed)]`, `#[derive(Model)]`).
    Object(&'static [FieldSchema]),
    /// A whole number between two bounds, stored as `int` or `long`.
    WholeNumber {
        /// The smallest value accepted.
        minimum: i32,
        /// The largest value accepted.
        maximum: i32,
    },
    /// Built by a function: a schema no other variant says (`enum`, `pattern`, `oneOf`...).
    Custom(fn() -> Document),
    /// Another schema, reached through a function: what `#[derive(Embed)]` emits, so that
    /// types holding each other (a question's answers holding questions) are described
    /// without a constant that holds itself. Where the function is reached again inside its
    /// own schema, the value there is left unconstrained, since a `$jsonSchema` cannot recurse.
    Of(fn() -> &'static Schema),
}

/// How many embedded types deep a schema is described; below, values are unconstrained.
const MAX_DEPTH: usize = 32;

/// One stored field of an object [`Schema`].
#[derive(Debug, Clone, Copy)]
pub struct FieldSchema {
    /// The stored name.
    pub name: &'static str,
    /// Whether every document holds it (serde always writes it).
    pub required: bool,
    /// Its value's schema; `None` for a type without one (no constraint).
    pub schema: Option<&'static Schema>,
    /// The declared array bound (`maxItems`).
    pub max_items: Option<u32>,
}

impl FieldSchema {
    /// A field serde always writes.
    pub const fn req(name: &'static str, schema: Option<&'static Schema>) -> Self {
        FieldSchema {
            name,
            required: true,
            schema,
            max_items: None,
        }
    }

    /// A field serde may leave out (an `Option`, a field skipped when empty).
    pub const fn opt(name: &'static str, schema: Option<&'static Schema>) -> Self {
        FieldSchema {
            name,
            required: false,
            schema,
            max_items: None,
        }
    }

    /// An array field bounded by `max_items`.
    pub const fn bounded(mut self, max_items: u32) -> Self {
        self.max_items = Some(max_items);
        self
    }
}

impl Schema {
    /// The schema as a `$jsonSchema` document.
    pub fn document(&self) -> Document {
        self.document_within(&mut Vec::new())
    }

    /// [`document`](Self::document) inside the schemas of `open` (an [`Of`](Schema::Of) being
    /// described), which are not described again.
    fn document_within(&self, open: &mut Vec<fn() -> &'static Schema>) -> Document {
        match *self {
            Schema::Types(names) => types(names),
            Schema::Nullable(inner) => nullable(inner.document_within(open)),
            Schema::Array(items) => {
                doc! { "bsonType": "array", "items": items.document_within(open) }
            }
            Schema::Map(values) => {
                doc! { "bsonType": "object", "additionalProperties": values.document_within(open) }
            }
            Schema::Object(fields) => {
                let mut object = ObjectSchema::default();
                for f in fields {
                    let schema = f.schema.map(|s| s.document_within(open));
                    object.field(f.name, f.required, schema, f.max_items);
                }
                object.finish()
            }
            Schema::WholeNumber { minimum, maximum } => doc! {
                "bsonType": ["int", "long"], "minimum": minimum, "maximum": maximum
            },
            Schema::Custom(build) => build(),
            // Also bounded in depth, should a function's address differ between two of its
            // uses (one copy per codegen unit).
            Schema::Of(schema) => {
                let again = open.iter().any(|f| std::ptr::fn_addr_eq(*f, schema));
                if again || open.len() >= MAX_DEPTH {
                    return Document::new();
                }
                open.push(schema);
                let out = schema().document_within(open);
                open.pop();
                out
            }
        }
    }
}

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

fn types(names: &[&str]) -> Document {
    match names {
        [one] => doc! { "bsonType": *one },
        many => doc! { "bsonType": many.iter().map(|n| Bson::from(*n)).collect::<Vec<_>>() },
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

/// The object schema of a struct, built field by field.
#[derive(Debug, Default)]
struct ObjectSchema {
    required: Vec<Bson>,
    properties: Document,
}

impl ObjectSchema {
    /// A stored field: `required` unless serde may leave it out (an `Option`, a field skipped
    /// when empty); `schema` is `None` for a type without one; `max_items` is the declared
    /// array bound.
    fn field(
        &mut self,
        name: &str,
        required: bool,
        schema: Option<Document>,
        max_items: Option<u32>,
    ) {
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
    }

    fn finish(self) -> Document {
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
