//! An own update bounded in its wait on the server (see [`Own::waiting_at_most`]): one raw
//! `update` command with `maxTimeMS`, which the driver's update does not take.
//!
//! [`Own::waiting_at_most`]: super::Own::waiting_at_most

use bson::{doc, Bson, Document};

use super::{Odm, Written};
use crate::{Error, Result};

/// Past this many documents named by `_id`, a bounded update is one multi-document statement,
/// so that the command stays far below the server's size limit.
const MAX_STATEMENTS: usize = 1000;

/// The statements of `update` of the documents `filter` matches: one per document when the
/// filter names them by `_id` (some servers keep a multi-document update waiting past its
/// `maxTimeMS`), else one (of every matching document, or one).
pub(super) fn statements(
    filter: &Document,
    update: &Document,
    array_filters: Option<&Vec<Document>>,
    many: bool,
) -> Vec<Document> {
    let statement = |q: Document, multi: bool| {
        let mut statement = doc! { "q": q, "u": update.clone(), "multi": multi };
        if let Some(array_filters) = array_filters {
            statement.insert("arrayFilters", array_filters.clone());
        }
        statement
    };
    match by_id(filter).filter(|_| many) {
        Some(ids) => ids
            .iter()
            .map(|id| {
                let mut q = filter.clone();
                q.insert("_id", id.clone());
                statement(q, false)
            })
            .collect(),
        None => vec![statement(filter.clone(), many)],
    }
}

/// The ids of `filter`'s `_id: {$in: [..]}` (at most [`MAX_STATEMENTS`] of them).
fn by_id(filter: &Document) -> Option<&Vec<Bson>> {
    let ids = filter.get_document("_id").ok()?.get_array("$in").ok()?;
    (ids.len() <= MAX_STATEMENTS).then_some(ids)
}

/// Sends `statements` to `collection` as one `update` command bounded to `ms`; a statement's
/// error (the command itself succeeded) is returned as the driver would report it, through
/// `fail` like the command's own.
pub(super) async fn send(
    odm: &Odm,
    collection: &str,
    statements: Vec<Document>,
    ms: i64,
    fail: impl Fn(mongodb::error::Error) -> Error,
) -> Result<Written> {
    let command = doc! { "update": collection, "updates": statements, "maxTimeMS": ms };
    let command = odm.with_own_concern(command);
    let reply = odm
        .own_database()
        .run_command(command)
        .await
        .map_err(&fail)?;
    let first = reply
        .get_array("writeErrors")
        .ok()
        .and_then(|errors| errors.first())
        .and_then(Bson::as_document);
    if let Some(first) = first {
        use mongodb::error::{ErrorKind, WriteError, WriteFailure};
        let failure: WriteError = bson::deserialize_from_document(first.clone()).map_err(|e| {
            Error::Unsupported(format!("an unreadable write error from the server: {e}"))
        })?;
        let e = mongodb::error::Error::from(ErrorKind::Write(WriteFailure::WriteError(failure)));
        return Err(fail(e));
    }
    let count = |field| super::statements::count_of(&reply, field);
    Ok(Written {
        matched: count("n"),
        modified: count("nModified"),
        upserted_id: None,
    })
}
