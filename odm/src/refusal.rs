//! A write the server refused because the document fails the collection's validator (code
//! 121): where it fails, read from the server's `errInfo`.

use bson::{Bson, Document};
use mongodb::error::{ErrorKind, WriteFailure};

/// The server's code for a document that fails validation.
const DOCUMENT_VALIDATION_FAILURE: i32 = 121;

/// What the server said about a refused document: its `_id`, the path of the first field that
/// fails and why.
pub(crate) struct Refusal {
    pub(crate) id: Option<Bson>,
    pub(crate) path: String,
    pub(crate) reason: String,
}

/// `Some` when `err` is a document-validation failure.
pub(crate) fn refusal(err: &mongodb::error::Error) -> Option<Refusal> {
    let (message, info) = match &*err.kind {
        ErrorKind::Write(WriteFailure::WriteError(we))
            if we.code == DOCUMENT_VALIDATION_FAILURE =>
        {
            (we.message.clone(), we.details.clone())
        }
        ErrorKind::Command(ce) if ce.code == DOCUMENT_VALIDATION_FAILURE => {
            (ce.message.clone(), None)
        }
        ErrorKind::InsertMany(im) => im
            .write_errors
            .as_ref()
            .and_then(|v| v.iter().find(|w| w.code == DOCUMENT_VALIDATION_FAILURE))
            .map(|w| (w.message.clone(), w.details.clone()))?,
        ErrorKind::BulkWrite(bw) => bw
            .write_errors
            .values()
            .find(|w| w.code == DOCUMENT_VALIDATION_FAILURE)
            .map(|w| (w.message.clone(), w.details.clone()))?,
        _ => return None,
    };
    let info = info.unwrap_or_default();
    let mut path = Vec::new();
    let reason = info
        .get_document("details")
        .ok()
        .and_then(|d| first_failure(d, &mut path))
        .unwrap_or(message);
    Some(Refusal {
        id: info.get("failingDocumentId").cloned(),
        path: if path.is_empty() {
            ".".to_owned()
        } else {
            path.join(".")
        },
        reason,
    })
}

/// Walks the server's explanation (`schemaRulesNotSatisfied`, `propertiesNotSatisfied`, ...)
/// down to the first rule that fails, collecting the property names on the way.
fn first_failure(d: &Document, path: &mut Vec<String>) -> Option<String> {
    if let Ok(name) = d.get_str("propertyName") {
        path.push(name.to_owned());
    }
    if let Ok(missing) = d.get_array("missingProperties") {
        let names: Vec<String> = missing
            .iter()
            .filter_map(|m| m.as_str().map(str::to_owned))
            .collect();
        if let [one] = names.as_slice() {
            path.push(one.clone());
        }
        return Some(format!("missing required field(s): {}", names.join(", ")));
    }
    if let Ok(reason) = d.get_str("reason") {
        let op = d.get_str("operatorName").unwrap_or("rule");
        let found = d
            .get("consideredValue")
            .map(|v| format!(" (found {v})"))
            .unwrap_or_default();
        return Some(format!("{op}: {reason}{found}"));
    }
    // Of the branches of an `anyOf`/`oneOf` (an `Option`'s `null` and its value, the kinds),
    // the one that got furthest into the document says best what is wrong.
    if let Ok(branches) = d.get_array("schemasNotSatisfied") {
        let mut best: Option<(Vec<String>, String)> = None;
        for item in branches.iter().filter_map(Bson::as_document) {
            let mut p = path.clone();
            if let Some(r) = first_failure(item, &mut p) {
                if best.as_ref().is_none_or(|(b, _)| p.len() > b.len()) {
                    best = Some((p, r));
                }
            }
        }
        if let Some((p, r)) = best {
            *path = p;
            return Some(r);
        }
    }
    for key in [
        "schemaRulesNotSatisfied",
        "propertiesNotSatisfied",
        "details",
    ] {
        if let Ok(items) = d.get_array(key) {
            for item in items.iter().filter_map(Bson::as_document) {
                let depth = path.len();
                if let Some(r) = first_failure(item, path) {
                    return Some(r);
                }
                path.truncate(depth);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_failure;
    use bson::doc;

    #[test]
    fn the_deepest_branch_names_the_field() {
        // What the server explains for `{publisher: {town: 7}}` against an `Option<Publisher>`.
        let details = doc! {"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{
            "operatorName": "properties", "propertiesNotSatisfied": [{
                "propertyName": "publisher", "details": [{
                    "operatorName": "anyOf", "schemasNotSatisfied": [
                        {"index": 0, "details": [{"operatorName": "bsonType", "reason": "type did not match"}]},
                        {"index": 1, "details": [{"operatorName": "properties", "propertiesNotSatisfied": [{
                            "propertyName": "town", "details": [{
                                "operatorName": "bsonType", "reason": "type did not match", "consideredValue": 7,
                            }],
                        }]}]},
                    ],
                }],
            }],
        }]};
        let mut path = Vec::new();
        let reason = first_failure(&details, &mut path).unwrap();
        assert_eq!(path, ["publisher", "town"]);
        assert_eq!(reason, "bsonType: type did not match (found 7)");
    }

    #[test]
    fn a_missing_field_is_named() {
        let details = doc! {"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [{
            "operatorName": "required", "missingProperties": ["title"],
        }]};
        let mut path = Vec::new();
        let reason = first_failure(&details, &mut path).unwrap();
        assert_eq!(path, ["title"]);
        assert_eq!(reason, "missing required field(s): title");
    }
}
