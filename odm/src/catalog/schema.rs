//! A model's `$jsonSchema` as data: what the catalog holds for a model's validator (see
//! [`crate::validator`]), and how it becomes the document sent to the server.

use bson::{doc, Bson, Document};

/// A value's `$jsonSchema` as data: what [`BsonSchema::SCHEMA`](crate::validator::BsonSchema::SCHEMA) holds and the derive emits for
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

fn types(names: &[&str]) -> Document {
    match names {
        [one] => doc! { "bsonType": *one },
        many => doc! { "bsonType": many.iter().map(|n| Bson::from(*n)).collect::<Vec<_>>() },
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
