//! An index, as the attributes (`#[index]`, `#[odm(index(...))]`) and the relations that need
//! one declare it.

use bson::{doc, Bson, Document};

/// Direction or kind of one index key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKey {
    /// `1`
    Asc,
    /// `-1`
    Desc,
    /// `"text"`
    Text,
    /// `"hashed"` (a hashed shard key's index, or `#[index(kind = "hashed")]`)
    Hashed,
    /// `"2dsphere"`: GeoJSON points, lines and polygons on a sphere (`#[index(kind = "2dsphere")]`)
    Sphere,
    /// `path.$**: 1`: every field below `path` (`#[index(kind = "wildcard")]`)
    Wildcard,
}

/// One declared index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSpec {
    pub(crate) keys: Vec<(String, IndexKey)>,
    pub(crate) name: Option<String>,
    pub(crate) unique: bool,
    pub(crate) sparse: bool,
    pub(crate) partial: Option<Document>,
    pub(crate) expire_after_secs: Option<u64>,
    /// `{locale, strength}`: how its strings compare (`#[index(collation(...))]`).
    pub(crate) collation: Option<Document>,
    /// Kept up to date but not used by the planner (`#[index(hidden)]`).
    pub(crate) hidden: bool,
}

/// The BSON types an index must hold to count a field as present: every type but `null`, so that
/// a unique index on an `Option` field does not make two absent values collide.
const PRESENT_TYPES: [&str; 15] = [
    "double",
    "string",
    "object",
    "array",
    "binData",
    "objectId",
    "bool",
    "date",
    "regex",
    "javascript",
    "int",
    "timestamp",
    "long",
    "decimal",
    "minKey",
];

impl IndexSpec {
    /// An index on one key.
    pub fn on(path: impl Into<String>, key: IndexKey) -> Self {
        IndexSpec {
            keys: vec![(path.into(), key)],
            name: None,
            unique: false,
            sparse: false,
            partial: None,
            expire_after_secs: None,
            collation: None,
            hidden: false,
        }
    }

    /// Compares its strings by the collation of `locale` at `strength` (1: base letters, 2:
    /// and accents, 3: and case): a unique index at strength 2 refuses `Ann@x.org` beside
    /// `ann@x.org`. Only a query with the same collation uses it.
    pub fn collation(mut self, locale: &str, strength: i32) -> Self {
        self.collation = Some(doc! { "locale": locale, "strength": strength });
        self
    }

    /// Kept up to date by every write but not used by the query planner: how an index is
    /// tried out before it is dropped.
    pub fn hidden(mut self) -> Self {
        self.hidden = true;
        self
    }

    /// Adds a key (compound index).
    pub fn then(mut self, path: impl Into<String>, key: IndexKey) -> Self {
        self.keys.push((path.into(), key));
        self
    }

    /// Rejects duplicate values.
    pub fn unique(mut self) -> Self {
        self.unique = true;
        self
    }

    /// Leaves out documents that lack the field.
    pub fn sparse(mut self) -> Self {
        self.sparse = true;
        self
    }

    /// Indexes only documents where `path` holds a value (not missing, not `null`): what a unique
    /// index on an `Option` field needs so that absent values do not collide.
    pub fn only_present(mut self, path: &str) -> Self {
        let types: Vec<Bson> = PRESENT_TYPES.iter().map(|t| Bson::from(*t)).collect();
        self.partial = Some(doc! { path: { "$type": types } });
        self
    }

    /// Indexes only documents matching `filter` (`partialFilterExpression`).
    pub fn partial(mut self, filter: Document) -> Self {
        self.partial = Some(filter);
        self
    }

    /// The index as a kind of a polymorphic model declares it: partial on the kind's
    /// discriminator (`{type: "series"}`), so that it holds the documents of that kind only and a
    /// unique index is unique among them; `sparse` becomes `{key: {$exists: true}}` for each key
    /// in the same filter (MongoDB refuses `sparse` together with a partial filter). Unless
    /// named, it is named after its keys and the kind (`volume_1_type_series`), so that two
    /// kinds may index a field of the same name.
    #[doc(hidden)]
    pub fn for_kind(mut self, kind: crate::kind::Kind) -> Self {
        let mut partial = doc! { kind.field: kind.value };
        if self.sparse {
            for (path, key) in &self.keys {
                if *key != IndexKey::Text {
                    partial.insert(path.clone(), doc! { "$exists": true });
                }
            }
            self.sparse = false;
        }
        if let Some(declared) = self.partial.take() {
            partial.extend(declared);
        }
        if self.name.is_none() {
            self.name = Some(format!("{}_{}_{}", self.name(), kind.field, kind.value));
        }
        self.partial = Some(partial);
        self
    }

    /// Deletes documents `secs` seconds after the date in the (single) key field.
    pub fn expire_after_secs(mut self, secs: u64) -> Self {
        self.expire_after_secs = Some(secs);
        self
    }

    /// Names the index; by default the name is MongoDB's (`book_1_user_1`).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The index name.
    pub fn name(&self) -> String {
        if let Some(n) = &self.name {
            return n.clone();
        }
        default_index_name(self.keys.iter().map(|(p, k)| {
            let (path, kind) = match k {
                IndexKey::Asc => (p.clone(), "1"),
                IndexKey::Desc => (p.clone(), "-1"),
                IndexKey::Text => (p.clone(), "text"),
                IndexKey::Hashed => (p.clone(), "hashed"),
                IndexKey::Sphere => (p.clone(), "2dsphere"),
                // The server names `{"attrs.$**": 1}` `attrs.$**_1`.
                IndexKey::Wildcard => (format!("{p}.$**"), "1"),
            };
            (path, kind.to_owned())
        }))
    }

    /// The keys, in order.
    pub fn keys(&self) -> &[(String, IndexKey)] {
        &self.keys
    }

    /// Whether the index is unique.
    pub fn is_unique(&self) -> bool {
        self.unique
    }

    pub(crate) fn key_document(&self) -> Document {
        let mut key = Document::new();
        for (p, k) in &self.keys {
            match k {
                IndexKey::Asc => key.insert(p, 1),
                IndexKey::Desc => key.insert(p, -1),
                IndexKey::Text => key.insert(p, "text"),
                IndexKey::Hashed => key.insert(p, "hashed"),
                IndexKey::Sphere => key.insert(p, "2dsphere"),
                IndexKey::Wildcard => key.insert(format!("{p}.$**"), 1),
            };
        }
        key
    }

    /// The `createIndexes` entry for this index.
    pub fn to_document(&self) -> Document {
        let mut d = doc! { "key": self.key_document(), "name": self.name() };
        if self.unique {
            d.insert("unique", true);
        }
        if self.sparse {
            d.insert("sparse", true);
        }
        if let Some(p) = &self.partial {
            d.insert("partialFilterExpression", p.clone());
        }
        if let Some(s) = self.expire_after_secs {
            d.insert("expireAfterSeconds", s as i64);
        }
        if let Some(c) = &self.collation {
            d.insert("collation", c.clone());
        }
        if self.hidden {
            d.insert("hidden", true);
        }
        d
    }
}

/// The name the server gives an index of these keys when none is given: each path and its
/// kind (`1`, `-1`, `text`, `hashed`), joined by `_` (`publisher.name_1_title_-1`).
pub(crate) fn default_index_name(keys: impl IntoIterator<Item = (String, String)>) -> String {
    keys.into_iter()
        .map(|(path, kind)| format!("{path}_{kind}"))
        .collect::<Vec<_>>()
        .join("_")
}
