//! A model's shard key, as the derive describes it (`#[odm(shard_key(...))]`).

use bson::{Bson, Document};

/// How one field of a shard key distributes the documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardOrder {
    /// `1`: ranges of values form chunks (neighbouring values on one shard).
    Ranged,
    /// `"hashed"`: the hash of the value picks the chunk (random placement).
    Hashed,
}

/// A shard key value the ODM computes on every insert and replacement: `"<YYYY-MM>-<md5>"`,
/// the month (UTC) of the date field `month` then the MD5 of the field `hash` (its bytes for
/// binary data, its UTF-8 for a string, its BSON encoding otherwise): segmented placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Stored name of the field the value is written to (one of the key's fields).
    pub field: &'static str,
    /// Stored name of the date field whose month leads the value.
    pub month: &'static str,
    /// Stored name of the field whose MD5 follows it.
    pub hash: &'static str,
}

/// The shard key of a model: its fields in order (stored names), how each is distributed,
/// and the value the ODM fills, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardKey {
    /// `(stored field, order)`, in the key's order.
    pub fields: &'static [(&'static str, ShardOrder)],
    /// The field the ODM computes on insert and replace.
    pub segment: Option<Segment>,
    /// `mutable`: typed updates may change the key's fields (MongoDB then moves the document
    /// to the shard owning its new value); without it, they are not writable through paths.
    pub mutable: bool,
}

impl ShardKey {
    /// The key as `shardCollection` and `createIndexes` take it: `{category: 1}`,
    /// `{host: 1, time: 1}`, `{user: "hashed"}`.
    pub fn key_document(&self) -> Document {
        let mut key = Document::new();
        for (field, order) in self.fields {
            let v = match order {
                ShardOrder::Ranged => Bson::Int32(1),
                ShardOrder::Hashed => Bson::String("hashed".to_owned()),
            };
            key.insert(*field, v);
        }
        key
    }

    /// The key's stored field names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.fields.iter().map(|(f, _)| *f).collect()
    }

    /// `category` or `{host, time}`, for messages.
    pub fn show(&self) -> String {
        match self.fields {
            [(one, _)] => format!("`{one}`"),
            many => format!(
                "`{{{}}}`",
                many.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}
