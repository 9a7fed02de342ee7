//! Native time-series collections (MongoDB 5.0 and later): a model declared with
//! `#[odm(time_series(time = "at", meta = "book", granularity = "minutes"))]` is stored in one,
//! which the server buckets by `meta` and time on its own: the workshop's per-minute counters
//! without the counting, for when the events themselves are kept.
//!
//! A time-series collection must be created as one before anything is written to it (an
//! insert would create an ordinary collection), so [`Odm::sync_indexes`](crate::Odm::sync_indexes)
//! (and `sync_indexes_of`) creates it first: for each declared time-series collection, one
//! `listCollections` (filtered by name), and one `create` with the `timeseries` options when it
//! is missing. A collection that exists but is not a time-series collection, or has other
//! options, and a server that refuses the `create` (a server without time-series collections)
//! are [`Error::TimeSeries`] naming the collection and what the server said; nothing is
//! changed then, and the indexes of that collection are not synced.

use bson::{doc, Bson, Document};

use crate::{Error, Odm, Result};

/// Creates `collection` as the time-series collection it is declared to be, if it is missing.
/// Sends nothing for a collection no model declares as one; otherwise one `listCollections`,
/// and one `create` when it is missing. Returns whether it created it.
pub(crate) async fn ensure(odm: &Odm, collection: &str) -> Result<bool> {
    let Some(entry) = odm.catalog().time_series(collection) else {
        return Ok(false);
    };
    let refused = |message: String| Error::TimeSeries {
        collection: collection.to_owned(),
        message,
    };
    let listed = odm
        .own_database()
        .run_command(doc! { "listCollections": 1, "filter": { "name": collection } })
        .await
        .map_err(|e| Error::from_driver(collection, e))?;
    let existing = listed
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .ok()
        .and_then(|b| b.iter().find_map(Bson::as_document));
    let wanted = entry.options();
    if let Some(existing) = existing {
        let kind = existing.get_str("type").unwrap_or("collection");
        let found = existing
            .get_document("options")
            .and_then(|o| o.get_document("timeseries"))
            .ok();
        return match found {
            Some(found) if same_options(&wanted, found) => Ok(false),
            Some(found) => Err(refused(format!(
                "it exists with the time-series options {found}, declared {wanted}"
            ))),
            None => Err(refused(format!(
                "it exists as a `{kind}`, not a time-series collection (a collection cannot be converted: drop it, or move its documents, first)"
            ))),
        };
    }
    odm.own_database()
        .run_command(doc! { "create": collection, "timeseries": wanted })
        .await
        .map_err(|e| {
            refused(format!(
                "the server refused to create it: {}",
                server_reply(&e)
            ))
        })?;
    Ok(true)
}

/// Whether the options the server lists match the declared ones (the server adds some of its
/// own, such as `bucketMaxSpanSeconds`, and a default granularity).
fn same_options(wanted: &Document, found: &Document) -> bool {
    wanted.iter().all(|(k, v)| found.get(k) == Some(v))
        && (wanted.contains_key("metaField") || !found.contains_key("metaField"))
}

/// The server's words and code, or the driver's error.
fn server_reply(e: &mongodb::error::Error) -> String {
    match &*e.kind {
        mongodb::error::ErrorKind::Command(c) => {
            format!("{} (code {}, {})", c.message, c.code, c.code_name)
        }
        _ => e.to_string(),
    }
}
