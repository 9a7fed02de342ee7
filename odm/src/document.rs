//! What several features need of a document: a hashable key for an id of any BSON type, and
//! the value at a dotted path, and how two dotted paths relate. It names no feature, so that every feature may use it.

use std::any::Any;

use bson::oid::ObjectId;
use bson::{Bson, Document};
use serde::Serialize;

/// An id as a hash key. Integers of either width are one key, as they are one value to
/// MongoDB's `$in`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdKey {
    ObjectId([u8; 12]),
    Int(i64),
    String(String),
    Other(Vec<u8>),
}

impl IdKey {
    pub(crate) fn of(id: &Bson) -> IdKey {
        match id {
            Bson::ObjectId(oid) => IdKey::ObjectId(oid.bytes()),
            Bson::Int32(i) => IdKey::Int(i64::from(*i)),
            Bson::Int64(i) => IdKey::Int(*i),
            Bson::String(s) => IdKey::String(s.clone()),
            other => {
                let doc = bson::doc! { "": other.clone() };
                IdKey::Other(bson::serialize_to_vec(&doc).unwrap_or_default())
            }
        }
    }

    /// The key of a typed id, without going through serde for the common id types (this runs
    /// once per reference, so it is on populate's hot path).
    pub(crate) fn of_id<I: Serialize + 'static>(id: &I) -> Result<IdKey, bson::error::Error> {
        let any = id as &dyn Any;
        if let Some(oid) = any.downcast_ref::<ObjectId>() {
            return Ok(IdKey::ObjectId(oid.bytes()));
        }
        if let Some(i) = any.downcast_ref::<i32>() {
            return Ok(IdKey::Int(i64::from(*i)));
        }
        if let Some(i) = any.downcast_ref::<i64>() {
            return Ok(IdKey::Int(*i));
        }
        if let Some(s) = any.downcast_ref::<String>() {
            return Ok(IdKey::String(s.clone()));
        }
        crate::path::encode_value(id).map(|b| IdKey::of(&b))
    }

    /// The id as BSON, from its key (exact for the common types; `None` for the others).
    pub(crate) fn to_bson(&self) -> Option<Bson> {
        match self {
            IdKey::ObjectId(bytes) => Some(Bson::ObjectId(ObjectId::from_bytes(*bytes))),
            IdKey::Int(_) | IdKey::String(_) | IdKey::Other(_) => None,
        }
    }
}

/// The value at a dotted path of a document (`Null` when missing).
pub(crate) fn value_at(doc: &Document, path: &str) -> bson::Bson {
    let mut parts = path.split('.');
    let mut current = parts.next().and_then(|p| doc.get(p));
    for part in parts {
        current = current
            .and_then(|c| c.as_document())
            .and_then(|d| d.get(part));
    }
    current.cloned().unwrap_or(bson::Bson::Null)
}

/// The value at a dotted path of a document, `None` when missing (see [`value_at`]).
pub(crate) fn get_path<'d>(doc: &'d Document, path: &str) -> Option<&'d Bson> {
    let mut parts = path.split('.');
    let mut current = doc.get(parts.next()?)?;
    for part in parts {
        current = current.as_document()?.get(part)?;
    }
    Some(current)
}

/// Whether `key` is `path` or a path inside it (`a.b` is under `a`, `ab` is not).
pub(crate) fn under(key: &str, path: &str) -> bool {
    key.strip_prefix(path)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Whether a write of one path changes the other: they are equal, or one is inside the other.
pub(crate) fn overlaps(a: &str, b: &str) -> bool {
    under(a, b) || under(b, a)
}
