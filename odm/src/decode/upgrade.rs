//! The upgrade of an old document on read.

use bson::raw::{RawBsonRef, RawDocument};
use bson::{Bson, Document, RawDocumentBuf};

use crate::catalog::{SchemaVersion, VERSION_FIELD};
use crate::error::show_id;
use crate::Error;

/// The stored document brought to the current version, or `None` when it is current (or newer:
/// it is then decoded as it is). A document without `_v` is version 1.
///
/// Costs nothing for a current document but reading `_v`; an old one is converted to a
/// `Document`, upgraded, and encoded again.
pub(crate) fn upgraded(
    collection: &str,
    version: SchemaVersion,
    raw: &RawDocument,
) -> crate::Result<Option<RawDocumentBuf>> {
    let Some(upgrade) = version.upgrade else {
        return Ok(None);
    };
    let fail = |message: String| Error::Decode {
        collection: collection.to_owned(),
        id: show_id(super::id_of(raw).as_ref()),
        path: VERSION_FIELD.to_owned(),
        message,
    };
    // Only a missing `_v` is version 1: any other value that is not a whole number from 1 up
    // is an error, not a version to upgrade from (which would upgrade a document again).
    let stored = match raw.get(VERSION_FIELD) {
        Ok(None) => 1,
        Ok(Some(RawBsonRef::Int32(v))) => i64::from(v),
        Ok(Some(RawBsonRef::Int64(v))) => v,
        Ok(Some(RawBsonRef::Double(v))) if v.fract() == 0.0 && v.abs() < 9.0e15 => v as i64,
        Ok(Some(other)) => {
            let shown = Bson::try_from(other).map_or_else(|_| "?".to_owned(), |b| b.to_string());
            return Err(fail(format!(
                "the schema version is {shown}, not a whole number"
            )));
        }
        Err(e) => return Err(fail(e.to_string())),
    };
    if stored < 1 {
        return Err(fail(format!(
            "the schema version is {stored}; versions count from 1"
        )));
    }
    if stored >= i64::from(version.current) {
        return Ok(None);
    }
    let mut doc = Document::try_from(raw).map_err(|e| fail(e.to_string()))?;
    let first = u32::try_from(stored).unwrap_or(1);
    for from in first..version.current {
        upgrade(from, &mut doc).map_err(|reason| {
            fail(format!(
                "cannot upgrade from schema version {from} to {}: {reason}",
                from + 1
            ))
        })?;
    }
    doc.insert(VERSION_FIELD, version.current as i32);
    RawDocumentBuf::try_from(&doc)
        .map(Some)
        .map_err(|e| fail(e.to_string()))
}
