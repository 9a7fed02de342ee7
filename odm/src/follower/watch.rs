//! What the follower watches: the collections the catalog says are the sources of something
//! (copied fields, latest-N arrays, referenced documents with delete rules, tree nodes, the
//! main sides of subset pairs, the children of two-way references), the
//! change stream over them, and the server's refusals told apart.

use std::time::Duration;

use bson::{doc, Bson, Document};
use mongodb::change_stream::event::ResumeToken;
use mongodb::change_stream::ChangeStream;

use crate::catalog::{Catalog, TreeInfo};
use crate::{Error, Odm, Result};

/// One watched collection and why.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    pub(crate) collection: &'static str,
    /// Other models copy from it (copied fields, summaries, latest-N arrays).
    pub(crate) copied: bool,
    /// A delete of its documents has rules (references into it, summaries of it).
    pub(crate) rules: bool,
    /// Its documents form a tree.
    pub(crate) tree: Option<TreeInfo>,
    /// It is the main side of subset pairs: their details' collections.
    pub(crate) details: Vec<&'static str>,
    /// Its documents are the children of two-way references: the parents' arrays to keep.
    pub(crate) two_way: Vec<crate::relations::TwoWay>,
    /// It is the details side of a subset pair: the main side's collection.
    pub(crate) main: Option<&'static str>,
}

/// The collections of `catalog` whose writes by other programs call for maintenance, by name.
pub(crate) fn watched(catalog: &Catalog) -> Vec<Watched> {
    let mut out: Vec<Watched> = Vec::new();
    for entry in catalog.models() {
        let collection = entry.collection;
        let copied = !catalog.copies_from(collection).is_empty();
        let rules = crate::relations::has_rules(catalog, collection);
        let tree = entry.tree;
        let details: Vec<&'static str> = catalog
            .models()
            .iter()
            .filter(|d| d.subset_of == Some(entry.type_name))
            .map(|d| d.collection)
            .collect();
        let two_way = crate::relations::two_way_of(catalog, collection);
        let main = entry.subset_of.and_then(|m| {
            catalog
                .models()
                .iter()
                .find(|e| e.type_name == m)
                .map(|e| e.collection)
        });
        let alone = !copied && !rules && tree.is_none() && details.is_empty();
        if alone && two_way.is_empty() && main.is_none() {
            continue;
        }
        match out.iter_mut().find(|w| w.collection == collection) {
            Some(w) => {
                w.tree = w.tree.or(tree);
                w.main = w.main.or(main);
                w.details.extend(details);
            }
            None => out.push(Watched {
                collection,
                copied,
                rules,
                tree,
                details,
                two_way,
                main,
            }),
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
    let (all, others): (Vec<&Watched>, Vec<&Watched>) = watched
        .iter()
        .partition(|w| w.copied || w.tree.is_some() || !w.two_way.is_empty());
    let (pairs, deletes): (Vec<&Watched>, Vec<&Watched>) = others
        .into_iter()
        .partition(|w| w.main.is_some() || !w.details.is_empty());
    let names =
        |ws: Vec<&Watched>| -> Vec<Bson> { ws.iter().map(|w| Bson::from(w.collection)).collect() };
    vec![
        doc! { "$match": {
            "operationType": { "$in": ["insert", "update", "replace", "delete"] },
            "$or": [
                { "ns.coll": { "$in": names(all) } },
                { "ns.coll": { "$in": names(deletes) }, "operationType": "delete" },
                { "ns.coll": { "$in": names(pairs) }, "operationType": { "$in": ["insert", "delete"] } },
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
        .database()
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
        _ => Error::from_driver(odm.database().name(), e),
    }
}

fn message(e: &mongodb::error::Error) -> String {
    match &*e.kind {
        mongodb::error::ErrorKind::Command(c) => format!("{} ({})", c.message, c.code),
        _ => e.to_string(),
    }
}
