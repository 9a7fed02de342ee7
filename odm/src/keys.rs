//! Refusing keys that MongoDB would read as operators or paths.

use bson::raw::{RawBsonRef, RawDocument};

use crate::{Error, Result};

/// Checks every key of `doc`, at any depth: a key must not start with `$` (except the DBRef
/// keys `$ref`, `$id`, `$db`) and must not contain `.`.
pub(crate) fn check_document(collection: &str, doc: &RawDocument) -> Result<()> {
    check_level(collection, doc, &mut String::new())
}

/// Checks the keys of a value about to be written at `path` (an id written as a reference,
/// say): the same rule as [`check_document`], for a document or the documents of an array.
pub(crate) fn check_value(collection: &str, path: &str, value: &bson::Bson) -> Result<()> {
    let encode_error = |e: bson::error::Error| Error::Encode {
        collection: collection.to_owned(),
        what: format!("value for `{path}`"),
        message: e.to_string(),
    };
    let one = |d: &bson::Document, at: String| -> Result<()> {
        let raw = bson::RawDocumentBuf::try_from(d).map_err(encode_error)?;
        check_level(collection, &raw, &mut { at })
    };
    match value {
        bson::Bson::Document(d) => one(d, path.to_owned()),
        bson::Bson::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            item.as_document()
                .map_or(Ok(()), |d| one(d, format!("{path}.{i}")))
        }),
        _ => Ok(()),
    }
}

fn check_level(collection: &str, doc: &RawDocument, path: &mut String) -> Result<()> {
    for element in doc {
        let (key, value) = element.map_err(|e| Error::Encode {
            collection: collection.to_owned(),
            what: "document".to_owned(),
            message: e.to_string(),
        })?;
        let key = key.as_str();
        let dbref =
            matches!(key, "$ref" | "$id" | "$db") && doc.get("$ref").ok().flatten().is_some();
        if (key.starts_with('$') && !dbref) || key.contains('.') {
            return Err(Error::InvalidKey {
                collection: collection.to_owned(),
                path: if path.is_empty() {
                    ".".to_owned()
                } else {
                    path.clone()
                },
                key: key.to_owned(),
            });
        }
        let len = path.len();
        match value {
            RawBsonRef::Document(d) => {
                push(path, key);
                check_level(collection, d, path)?;
            }
            RawBsonRef::Array(a) => {
                for (i, item) in a.into_iter().enumerate() {
                    if let Ok(RawBsonRef::Document(d)) = item {
                        push(path, key);
                        path.push('.');
                        path.push_str(&i.to_string());
                        check_level(collection, d, path)?;
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
        path.truncate(len);
    }
    Ok(())
}

fn push(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, RawDocumentBuf};

    fn check(d: bson::Document) -> Result<()> {
        let raw = RawDocumentBuf::try_from(&d).unwrap();
        check_document("c", &raw)
    }

    #[test]
    fn accepts_plain_documents_and_dbrefs() {
        check(doc! {"a": 1, "b": {"c": [ {"d": 1} ]}, "r": {"$ref": "x", "$id": 1}}).unwrap();
    }

    #[test]
    fn refuses_operator_keys_at_any_depth() {
        let err = check(doc! {"a": {"b": [ {"ok": 1}, {"$gt": 1} ]}}).unwrap_err();
        match err {
            Error::InvalidKey { path, key, .. } => {
                assert_eq!(path, "a.b.1");
                assert_eq!(key, "$gt");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn refuses_dotted_keys() {
        let err = check(doc! {"m": {"a.b": 1}}).unwrap_err();
        assert!(
            matches!(err, Error::InvalidKey { ref key, .. } if key == "a.b"),
            "{err}"
        );
    }
}
