//! Decoding stored documents with errors that name collection, `_id` and field path.

use bson::raw::RawDocument;
use bson::{Bson, Document};
use serde::de::DeserializeOwned;

use crate::error::DisplayBson;
use crate::Error;

/// Decodes one stored document. The fast path decodes straight from the raw bytes; only when
/// that fails is the document decoded again, tracking the path, to say where it went wrong.
pub(crate) fn decode<T: DeserializeOwned>(collection: &str, raw: &RawDocument) -> crate::Result<T> {
    match bson::deserialize_from_slice::<T>(raw.as_bytes()) {
        Ok(v) => Ok(v),
        Err(first) => Err(explain::<T>(collection, raw, first)),
    }
}

fn explain<T: DeserializeOwned>(collection: &str, raw: &RawDocument, first: bson::error::Error) -> Error {
    let id = raw
        .get("_id")
        .ok()
        .flatten()
        .and_then(|v| Bson::try_from(v).ok());
    let doc = Document::try_from(raw).ok();
    let (path, message) = match doc
        .map(|d| serde_path_to_error::deserialize::<_, T>(bson::de::Deserializer::new(Bson::Document(d))))
    {
        Some(Err(e)) => {
            let path = e.path().to_string();
            (path, e.into_inner().to_string())
        }
        _ => (
            first.key.clone().unwrap_or_else(|| ".".to_owned()),
            first.to_string(),
        ),
    };
    Error::Decode {
        collection: collection.to_owned(),
        id: DisplayBson(id),
        path,
        message,
    }
}
