//! Refusing keys that MongoDB would read as operators or paths.

use bson::raw::{RawBsonRef, RawDocument};
use bson::spec::ElementType;

use crate::{Error, Result};

/// Checks every key of `doc`, at any depth: a key must not start with `$` (except the DBRef
/// keys `$ref`, `$id`, `$db`) and must not contain `.`.
pub(crate) fn check_document(collection: &str, doc: &RawDocument) -> Result<()> {
    check_level(collection, doc, &mut Vec::new())
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
        check_level(collection, &raw, &mut vec![Step::Key(&at)])
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

/// A step of the path to the level being checked, for error messages only: the hot path
/// builds no string.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn show_path(path: &[Step<'_>]) -> String {
    if path.is_empty() {
        return ".".to_owned();
    }
    let mut out = String::new();
    for (i, step) in path.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        match step {
            Step::Key(k) => out.push_str(k),
            Step::Index(n) => out.push_str(&n.to_string()),
        }
    }
    out
}

/// Walks the elements of `doc` without decoding their values (no string is read, only the
/// keys and the bounds of each element), descending into documents and arrays.
fn check_level<'a>(collection: &str, doc: &'a RawDocument, path: &mut Vec<Step<'a>>) -> Result<()> {
    let malformed = |e: bson::error::Error| Error::Encode {
        collection: collection.to_owned(),
        what: "document".to_owned(),
        message: e.to_string(),
    };
    for element in doc.iter_elements() {
        let element = element.map_err(malformed)?;
        let key = element.key().as_str();
        if key.starts_with('$') || key.contains('.') {
            let dbref =
                matches!(key, "$ref" | "$id" | "$db") && doc.get("$ref").ok().flatten().is_some();
            if !dbref {
                return Err(Error::InvalidKey {
                    collection: collection.to_owned(),
                    path: show_path(path),
                    key: key.to_owned(),
                });
            }
        }
        match element.element_type() {
            ElementType::EmbeddedDocument => {
                if let RawBsonRef::Document(d) = element.value().map_err(malformed)? {
                    path.push(Step::Key(key));
                    check_level(collection, d, path)?;
                    path.pop();
                }
            }
            ElementType::Array => {
                if let RawBsonRef::Array(a) = element.value().map_err(malformed)? {
                    path.push(Step::Key(key));
                    for (i, item) in a.iter_elements().enumerate() {
                        let item = item.map_err(malformed)?;
                        if item.element_type() == ElementType::EmbeddedDocument {
                            if let RawBsonRef::Document(d) = item.value().map_err(malformed)? {
                                path.push(Step::Index(i));
                                check_level(collection, d, path)?;
                                path.pop();
                            }
                        }
                    }
                    path.pop();
                }
            }
            _ => {}
        }
    }
    Ok(())
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
