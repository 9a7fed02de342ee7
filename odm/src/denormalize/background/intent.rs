//! Reading an intent document back: every field the worker relies on, checked, so that a
//! document written behind the ODM's back is a typed error naming it, never a panic.

use bson::{Bson, Document};

use super::super::CopyInfo;
use super::{background_copies, name_of, INTENTS};
use crate::{Error, Result};

/// An intent, as the worker reads it.
pub(super) struct Intent {
    /// The source collection.
    pub(super) source: &'static str,
    /// The source document's `_id`.
    pub(super) id: Bson,
    /// Bumped by every source write recorded.
    pub(super) seq: i64,
    /// The copies to write, in the order recorded.
    pub(super) copies: Vec<CopyInfo>,
    /// When the first write not yet applied was recorded.
    pub(super) since: Option<bson::DateTime>,
    /// Whether batches of it were written already (by a worker that was killed, paused, or
    /// overtaken by a newer write): some copies may be written, others not.
    pub(super) resumed: bool,
}

fn malformed(key: Option<&Bson>, path: &str, message: impl Into<String>) -> Error {
    Error::Decode {
        collection: INTENTS.to_owned(),
        id: crate::error::show_id(key),
        path: path.to_owned(),
        message: message.into(),
    }
}

impl Intent {
    /// Reads `doc`: a typed [`Error::Decode`] naming the intent's `_id` and the field when it
    /// is not what the ODM writes, or names a source or copy this program does not declare.
    pub(super) fn read(catalog: &crate::catalog::Catalog, doc: &Document) -> Result<Intent> {
        let key = doc.get("_id");
        let Some(Bson::Document(parts)) = key else {
            return Err(malformed(
                key,
                "_id",
                "an intent's `_id` is `{ source: <collection>, id: <source _id> }`",
            ));
        };
        let source_name = match parts.get("source") {
            Some(Bson::String(s)) => s.as_str(),
            _ => {
                return Err(malformed(
                    key,
                    "_id.source",
                    "expected the source collection's name, a string",
                ))
            }
        };
        let Some(id) = parts.get("id") else {
            return Err(malformed(
                key,
                "_id.id",
                "missing: the source document's `_id`",
            ));
        };
        let seq = match doc.get("seq") {
            Some(Bson::Int64(n)) => *n,
            Some(Bson::Int32(n)) => i64::from(*n),
            other => {
                return Err(malformed(
                    key,
                    "seq",
                    format!("expected a whole number, found {}", show(other)),
                ))
            }
        };
        let declared = background_copies(catalog, source_name);
        let Some(source) = declared.first().map(|c| c.source) else {
            return Err(malformed(
                key,
                "_id.source",
                format!("no copy of `{source_name}` is cascaded in the background in this program"),
            ));
        };
        let Some(Bson::Array(names)) = doc.get("copies") else {
            return Err(malformed(
                key,
                "copies",
                format!(
                    "expected an array of copy names, found {}",
                    show(doc.get("copies"))
                ),
            ));
        };
        let mut copies = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let path = format!("copies.{i}");
            let Bson::String(name) = name else {
                return Err(malformed(
                    key,
                    &path,
                    format!("expected a copy name (`collection.path`), found {name}"),
                ));
            };
            match declared.iter().find(|c| name_of(c) == *name) {
                Some(c) => copies.push(c.clone()),
                None => {
                    let known: Vec<String> = declared.iter().map(name_of).collect();
                    return Err(malformed(
                        key,
                        &path,
                        format!("`{name}` is no copy of `{source}` cascaded in the background; those are {}", known.join(", ")),
                    ));
                }
            }
        }
        let since = match doc.get("since") {
            Some(Bson::DateTime(d)) => Some(*d),
            None => None,
            other => {
                return Err(malformed(
                    key,
                    "since",
                    format!("expected a date, found {}", show(other)),
                ))
            }
        };
        let resumed = matches!(doc.get("batches"), Some(Bson::Int64(n)) if *n > 0)
            || matches!(doc.get("batches"), Some(Bson::Int32(n)) if *n > 0);
        Ok(Intent {
            source,
            id: id.clone(),
            seq,
            copies,
            since,
            resumed,
        })
    }
}

fn show(value: Option<&Bson>) -> String {
    value.map_or_else(|| "nothing".to_owned(), |v| v.to_string())
}
