//! The values a shard key takes in a document: the segment the ODM computes on every insert
//! and replacement, and the key's values pinned in the filter of a write of a loaded document
//! (so that it is routed to the document's shard).

use bson::raw::{RawBsonRef, RawDocument};
use bson::{doc, Bson, Document, RawDocumentBuf};

use super::ShardKey;
use crate::{Error, Result};

/// Writes the computed key value of `key.segment` into `raw` (every insert and replace of a
/// model whose key declares `fill`): a value the struct held is overwritten, so that the key
/// is always the one its month and hashed field give.
pub(crate) fn fill_segment(
    collection: &str,
    raw: &mut RawDocumentBuf,
    key: &ShardKey,
) -> Result<()> {
    let Some(segment) = key.segment else {
        return Ok(());
    };
    let id = raw
        .get("_id")
        .ok()
        .flatten()
        .and_then(|v| Bson::try_from(v).ok());
    let refuse = |detail: String| Error::Encode {
        collection: collection.to_owned(),
        what: format!(
            "shard key `{}` of {}",
            segment.field,
            crate::error::show_id(id.as_ref())
        ),
        message: detail,
    };
    let month = match raw.get(segment.month) {
        Ok(Some(RawBsonRef::DateTime(d))) => d
            .try_to_rfc3339_string()
            .ok()
            .and_then(|s| s.get(..7).map(str::to_owned))
            .ok_or_else(|| {
                refuse(format!(
                    "`{}` holds a date outside years 0-9999",
                    segment.month
                ))
            })?,
        other => {
            return Err(refuse(format!(
                "`{}` must hold a date to compute the key's month, found {}",
                segment.month,
                other
                    .ok()
                    .flatten()
                    .map_or("nothing".to_owned(), |v| format!("{:?}", v.element_type()))
            )))
        }
    };
    let hash = match raw.get(segment.hash) {
        Ok(Some(RawBsonRef::Binary(b))) => md5_hex(b.bytes),
        Ok(Some(RawBsonRef::String(s))) => md5_hex(s.as_bytes()),
        Ok(Some(v)) => {
            let wrapped = bson::serialize_to_raw_document_buf(
                &doc! { "v": Bson::try_from(v).unwrap_or(Bson::Null) },
            )
            .map_err(|e| refuse(e.to_string()))?;
            md5_hex(wrapped.as_bytes())
        }
        _ => {
            return Err(refuse(format!(
                "`{}` is missing: the key hashes it",
                segment.hash
            )))
        }
    };
    let value = format!("{month}-{hash}");
    let mut doc = Document::try_from(raw.as_ref()).map_err(|e| refuse(e.to_string()))?;
    doc.insert(segment.field, value);
    *raw = RawDocumentBuf::try_from(&doc).map_err(|e| refuse(e.to_string()))?;
    Ok(())
}

fn md5_hex(bytes: &[u8]) -> String {
    use md5::Digest;
    md5::Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Adds each field of the key to `filter` with the value `doc` holds (`null` when it holds
/// none, which is how the server places such a document), as [`crate::literal::eq`] matches a
/// value, so that a write of a loaded document is routed to its shard.
pub(crate) fn pin_key(filter: &mut Document, doc: &RawDocument, key: &ShardKey) {
    for (field, _) in key.fields {
        if filter.contains_key(*field) {
            continue;
        }
        let value = value_at(doc, field)
            .and_then(|v| Bson::try_from(v).ok())
            .unwrap_or(Bson::Null);
        filter.insert(*field, crate::literal::condition(value));
    }
}

/// The value at the key's `path` (`host`, or `meta.host` inside an embedded document), if the
/// document holds one.
fn value_at<'a>(doc: &'a RawDocument, path: &str) -> Option<bson::RawBsonRef<'a>> {
    let (first, rest) = match path.split_once('.') {
        Some((first, rest)) => (first, Some(rest)),
        None => (path, None),
    };
    let value = doc.get(first).ok().flatten()?;
    match rest {
        None => Some(value),
        Some(rest) => value_at(value.as_document()?, rest),
    }
}
