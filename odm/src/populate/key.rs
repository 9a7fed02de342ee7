//! Hashable keys for ids of any BSON type, to deduplicate and match references.

use bson::Bson;

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
}
