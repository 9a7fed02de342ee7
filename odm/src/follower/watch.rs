//! What the follower watches: the collections the catalog says are the sources of something
//! (copied fields, latest-N arrays, referenced documents with delete rules, tree nodes, the
//! main sides of subset pairs, the children of two-way references), the
//! change stream over them, and the server's refusals told apart.

use std::time::Duration;

use bson::{doc, Bson, Document};
use mongodb::change_stream::event::ResumeToken;
use mongodb::change_stream::ChangeStream;

use crate::catalog::Catalog;
use crate::engine::Interest;
use crate::pipeline::following::{FollowList, Followers};
use crate::{Error, Odm, Result};

/// One watched collection, and which of its writes the features follow.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    pub(crate) collection: &'static str,
    pub(crate) interest: Interest,
}

/// The collections of `catalog` whose writes by other programs call for maintenance, by name:
/// those some feature follows (see `crate::pipeline`'s `Followers`).
pub(crate) fn watched(catalog: &Catalog) -> Vec<Watched> {
    let mut out: Vec<Watched> = Vec::new();
    for entry in catalog.models() {
        let collection = entry.collection;
        if out.iter().any(|w| w.collection == collection) {
            continue;
        }
        let interest = Followers::interest(catalog, collection);
        if interest != Interest::None {
            out.push(Watched {
                collection,
                interest,
            });
        }
    }
    out.sort_by_key(|w| w.collection);
    out
}

/// The change stream's pipeline: the watched collections' inserts, updates, replacements and
/// deletes, each event cut to what the follower reads (its token, kind, collection, key, time
/// and the names of the fields an update changed; never the documents themselves).
pub(crate) fn pipeline(watched: &[Watched]) -> Vec<Document> {
    // A collection watched for its delete rules only is watched for its deletes only; a side
    // of a subset pair for its inserts and deletes.
    let names = |interest: Interest| -> Vec<Bson> {
        watched
            .iter()
            .filter(|w| w.interest == interest)
            .map(|w| Bson::from(w.collection))
            .collect()
    };
    let (all, deletes, pairs) = (
        names(Interest::All),
        names(Interest::Deletes),
        names(Interest::InsertsAndDeletes),
    );
    vec![
        doc! { "$match": {
            "operationType": { "$in": ["insert", "update", "replace", "delete"] },
            "$or": [
                { "ns.coll": { "$in": all } },
                { "ns.coll": { "$in": deletes }, "operationType": "delete" },
                { "ns.coll": { "$in": pairs }, "operationType": { "$in": ["insert", "delete"] } },
            ],
        } },
        doc! { "$project": {
            "operationType": 1,
            "ns": 1,
            "documentKey": 1,
            "clusterTime": 1,
            "wallTime": 1,
            "updateDescription.updatedFields": 1,
            "updateDescription.removedFields": 1,
        } },
    ]
}

/// Opens the change stream over the watched collections, after `token` when given (else from
/// the present).
pub(crate) async fn open(
    odm: &Odm,
    watched: &[Watched],
    token: Option<ResumeToken>,
    batch: u32,
    wait: Duration,
) -> Result<ChangeStream<Document>> {
    let action = odm
        .own_database()
        .watch()
        .pipeline(pipeline(watched))
        .resume_after(token)
        .batch_size(batch)
        .max_await_time(wait);
    let stream = action.await.map_err(|e| refusal(odm, e))?;
    Ok(stream.with_type::<Document>())
}

/// The server's code of a command error.
fn code(e: &mongodb::error::Error) -> Option<i32> {
    match &*e.kind {
        mongodb::error::ErrorKind::Command(c) => Some(c.code),
        _ => None,
    }
}

/// Whether the stored position can no longer be resumed from: `ChangeStreamHistoryLost`
/// (286), a token the server does not find (`ChangeStreamFatalError`, 280, or
/// `InvalidResumeToken`, 260).
pub(crate) fn is_history_lost(e: &Error) -> bool {
    matches!(e, Error::ChangeStreamHistoryLost { .. })
}

/// A driver error of the change stream, typed: no change streams on this deployment, the
/// history lost, or the driver's error.
pub(crate) fn refusal(odm: &Odm, e: mongodb::error::Error) -> Error {
    match code(&e) {
        Some(40573) => Error::ChangeStreamsUnavailable {
            reason: format!(
                "the server runs standalone ({}); change streams need a replica set or a sharded cluster",
                message(&e)
            ),
        },
        Some(286) | Some(280) | Some(260) => Error::ChangeStreamHistoryLost {
            message: message(&e),
        },
        _ => Error::from_driver(odm.own_database().name(), e),
    }
}

fn message(e: &mongodb::error::Error) -> String {
    match &*e.kind {
        mongodb::error::ErrorKind::Command(c) => format!("{} ({})", c.message, c.code),
        _ => e.to_string(),
    }
}
