//! Encoding a model document for writing: keys checked, `_id` first, the kind stored; the
//! filter of a loaded document; typed updates checked.

use bson::raw::{RawBsonRef, RawDocument};
use bson::{Bson, Document, RawDocumentBuf};

use crate::key_check::check_document;
use crate::query::Filter;
use crate::update::Update;
use crate::{Error, Model, Odm, Result};

/// The id of `doc` when odm would send it exactly as serde writes it: no key to check (the
/// model's keys are all known while compiling), no kind, schema version or shard key to add, no
/// bound exceeded, its id set. Such a document may be handed to the driver to serialize, once.
pub(crate) fn as_serialized<T: Model>(doc: &T) -> Option<&T::Id> {
    let entry = T::entry();
    let plain = T::plain_keys()
        && entry.kind.is_none()
        && T::SCHEMA_VERSION.is_none()
        && entry.shard_key.is_none()
        && doc.bound_violation().is_none();
    plain.then(|| doc.document_id()).flatten()
}

/// Encodes a model document for writing: keys checked (unless the model's are all known while
/// compiling, [`Model::plain_keys`]), `_id` present (generated when the type allows). Returns
/// the document and its id.
pub(crate) fn encode_document<T: Model>(doc: &T) -> Result<(RawDocumentBuf, T::Id)> {
    let encode_error = |e: bson::error::Error| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document".to_owned(),
        message: e.to_string(),
    };
    if let Some((path, len, max)) = doc.bound_violation() {
        return Err(Error::BoundExceeded {
            collection: T::COLLECTION.to_owned(),
            path: path.to_owned(),
            max,
            documents: 1,
            detail: format!("the document holds {len} elements"),
        });
    }
    let mut raw = bson::serialize_to_raw_document_buf(doc).map_err(encode_error)?;
    // Keys known while compiling (the model's and its embedded types' field names) need no
    // look; a map, a free-form document or a value written by the application's own function
    // is checked.
    if !T::plain_keys() {
        check_document(T::COLLECTION, &raw)?;
    }
    if let Some(kind) = T::entry().kind {
        store_kind::<T>(&mut raw, kind)?;
    }
    if let Some(v) = T::SCHEMA_VERSION {
        raw.append(bson::raw::cstr!("_v"), v.current as i32);
    }
    if let Some(key) = T::entry().shard_key {
        crate::catalog::fill_segment(T::COLLECTION, &mut raw, &key)?;
    }
    let has_id = matches!(raw.get("_id"), Ok(Some(v)) if !matches!(v, RawBsonRef::Null));
    if has_id {
        let id = doc
            .document_id()
            .cloned()
            .map_or_else(|| id_of::<T>(&raw), Ok)?;
        return Ok((raw, id));
    }
    let id = T::generate_id().ok_or_else(|| Error::MissingId {
        collection: T::COLLECTION.to_owned(),
    })?;
    // An `Option` id left empty: `_id` first, as the server would put it.
    let raw = with_id_first(&raw, &id).map_err(|message| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document".to_owned(),
        message,
    })?;
    Ok((raw, id))
}

/// `raw` with `_id: id` as its first element and the `_id` it held, if any (a null), left out:
/// spliced from the bytes, nothing decoded or serialized again but the id.
fn with_id_first<I: serde::Serialize>(
    raw: &RawDocumentBuf,
    id: &I,
) -> std::result::Result<RawDocumentBuf, String> {
    #[derive(serde::Serialize)]
    struct Head<'a, I> {
        #[serde(rename = "_id")]
        id: &'a I,
    }
    let mut out = bson::serialize_to_raw_document_buf(&Head { id })
        .map_err(|e| e.to_string())?
        .into_bytes();
    // The head's terminating null goes: the document's elements follow.
    out.pop();
    let bytes = raw.as_bytes();
    out.reserve(bytes.len());
    let mut elements = crate::key_check::Elements::new(bytes);
    // Type byte, key, its null, value: everything from the type byte to the value's end.
    let mut at = 4;
    for element in elements.by_ref() {
        let (_, key, value) = element.ok_or("malformed document")?;
        let end = value.as_ptr() as usize - bytes.as_ptr() as usize + value.len();
        if key != b"_id" {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    if !elements.finished() {
        return Err("malformed document".to_owned());
    }
    out.push(0);
    let total = i32::try_from(out.len()).map_err(|_| "the document is too large".to_owned())?;
    out[..4].copy_from_slice(&total.to_le_bytes());
    RawDocumentBuf::from_bytes(out).map_err(|e| e.to_string())
}

/// A kind's document carries its discriminator: appended when the struct does not store it,
/// refused when it stores another value.
fn store_kind<T: Model>(raw: &mut RawDocumentBuf, kind: crate::kind::Kind) -> Result<()> {
    match raw.get(kind.field) {
        Ok(None) => {
            // The derive refuses a discriminator field name that is not a valid key.
            let key = <&bson::raw::CStr>::try_from(kind.field).map_err(|e| Error::Encode {
                collection: T::COLLECTION.to_owned(),
                what: "discriminator".to_owned(),
                message: e.to_string(),
            })?;
            raw.append(key, kind.value);
            Ok(())
        }
        Ok(Some(RawBsonRef::String(v))) if v == kind.value => Ok(()),
        other => Err(Error::Encode {
            collection: T::COLLECTION.to_owned(),
            what: "document".to_owned(),
            message: format!(
                "the document stores `{}: {:?}`, but it is the kind `{}: {:?}`",
                kind.field,
                other
                    .ok()
                    .flatten()
                    .and_then(|v| Bson::try_from(v).ok())
                    .unwrap_or(Bson::Null),
                kind.field,
                kind.value
            ),
        }),
    }
}

fn id_of<T: Model>(raw: &RawDocument) -> Result<T::Id> {
    let value = crate::decode::id_of(raw).unwrap_or(Bson::Null);
    bson::deserialize_from_bson(value).map_err(|e| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document id".to_owned(),
        message: e.to_string(),
    })
}

/// An update document, with the keys of every value it writes checked (typed updates only:
/// a raw update may carry modifiers such as `$each`).
pub(crate) fn checked_update<T>(collection: &str, update: Update<T>) -> Result<Document> {
    let raw = update.is_raw();
    let doc = update.into_document(collection)?;
    if !raw {
        for fields in doc.values() {
            if let Bson::Document(fields) = fields {
                for value in fields.values() {
                    // Only documents and arrays can hold keys to check.
                    if matches!(value, Bson::Document(_) | Bson::Array(_)) {
                        let wrapped = bson::doc! { "v": value.clone() };
                        let raw =
                            RawDocumentBuf::try_from(&wrapped).map_err(|e| Error::Encode {
                                collection: collection.to_owned(),
                                what: "update value".to_owned(),
                                message: e.to_string(),
                            })?;
                        check_document(collection, &raw)?;
                    }
                }
            }
        }
    }
    Ok(doc)
}

impl Odm {
    /// The filter of one loaded document: its `_id`, and its shard key values for a sharded
    /// model.
    pub(super) fn document_filter<T: Model>(&self, doc: &T) -> Filter<T> {
        match doc.document_id() {
            None => Filter::from_parts(
                Document::new(),
                Some(crate::query::Deferred::new(
                    "document id".to_owned(),
                    "the document has no `_id`: it was never stored".to_owned(),
                )),
            ),
            Some(id) => {
                let by_id = T::id_field().eq(id);
                match T::entry().shard_key {
                    None => by_id,
                    // The key as the insert stored it (a computed one recomputed).
                    Some(key) => match encode_document(doc) {
                        Ok((raw, _)) => {
                            let (mut filter, error) = by_id.into_parts();
                            crate::catalog::pin_key(&mut filter, &raw, &key);
                            Filter::from_parts(filter, error)
                        }
                        Err(e) => Filter::from_parts(
                            Document::new(),
                            Some(crate::query::Deferred::new(
                                "document".to_owned(),
                                e.to_string(),
                            )),
                        ),
                    },
                }
            }
        }
    }
}

/// Refuses the `let` variables of a write of `T` that a maintainer takes: the ODM's own
/// commands for it (a delete plan's `find`, a cascade's `findAndModify`) read the filter
/// without them, and the server would refuse each of them or, worse, match otherwise.
pub(crate) fn let_checked<T: Model>(
    odm: &crate::Odm,
    extras: &Option<Box<crate::engine::Extras>>,
) -> Result<()> {
    let has_let = extras.as_ref().is_some_and(|e| e.let_vars.is_some());
    if has_let
        && matches!(
            crate::pipeline::route::<T>(odm),
            crate::pipeline::Route::Maintained
        )
    {
        return Err(Error::Unsupported(format!(
            "`let_vars` on a write of `{}`, which the ODM maintains: its own commands for the \
             write read the filter without them; compare with values in the filter instead",
            T::COLLECTION
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, oid::ObjectId};

    #[test]
    fn the_generated_id_goes_first_and_the_rest_is_kept_byte_for_byte() {
        let id = ObjectId::new();
        let rest = doc! {
            "name": "a string", "n": 3_i64, "nested": { "k": [1, { "deep": "x" }] },
            "bin": bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![1, 2, 3] },
        };
        for held in [None, Some(Bson::Null)] {
            let mut d = Document::new();
            if let Some(v) = &held {
                d.insert("_id", v.clone());
            }
            d.extend(rest.clone());
            let raw = RawDocumentBuf::try_from(&d).unwrap();
            let out = with_id_first(&raw, &id).unwrap();
            let mut want = doc! { "_id": id };
            want.extend(rest.clone());
            assert_eq!(
                Document::try_from(out.as_ref()).unwrap(),
                want,
                "held: {held:?}"
            );
            assert_eq!(
                out.as_bytes(),
                RawDocumentBuf::try_from(&want).unwrap().as_bytes()
            );
        }
    }
}
