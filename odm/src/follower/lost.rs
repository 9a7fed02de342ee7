//! When the stored position is no longer in the server's history: the repairing sweeps of what
//! the follower maintains, run once the stream is open at the present (so that nothing written
//! during the sweeps is missed), and what they repaired.

use bson::{doc, Bson};

use super::watch::Watched;
use crate::denormalize::CopyReport;
use crate::error::DeleteRestricted;
use crate::tree::TreeReport;
use crate::{Error, Odm, Result};

/// What the follower did when its stored position was lost (see [`super::FollowerReport`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryLost {
    /// What the server said.
    pub message: String,
    /// The sweep of every copy (`verify_copies` with repair): what it found and repaired.
    pub copies: CopyReport,
    /// The sweep of each tree, by collection.
    pub trees: Vec<(String, TreeReport)>,
    /// Documents referenced but missing (deleted meanwhile), whose delete rules were applied.
    pub dangling: u64,
    /// `restrict` rules those deletes broke.
    pub violations: Vec<DeleteRestricted>,
    /// The repair of each subset pair: details without their main document deleted, main
    /// documents without details reported.
    pub subsets: Vec<crate::subset::SubsetReport>,
}

/// Logs the loss, then runs the sweeps: copies (all of them, latest-N arrays and two-way
/// references included), trees, the delete rules of documents referenced but missing, and
/// the subset pairs' repair.
pub(crate) async fn repair(odm: &Odm, watched: &[Watched], lost: Error) -> Result<HistoryLost> {
    let message = match lost {
        Error::ChangeStreamHistoryLost { message } => message,
        other => other.to_string(),
    };
    tracing::warn!(target: "odm", %message, "follower: the stored position is lost; sweeping and following from the present");
    let copies = odm.verify_copies().repair(true).await?;
    let catalog = odm.catalog();
    let mut trees = Vec::new();
    for w in watched {
        if let Some(info) = crate::tree::tree_of(catalog, w.collection) {
            let report = crate::tree::sweep(odm, w.collection, info, true).await?;
            trees.push((w.collection.to_owned(), report));
        }
    }
    let mut dangling = 0;
    let mut violations = Vec::new();
    for w in watched
        .iter()
        .filter(|w| crate::relations::has_rules(catalog, w.collection))
    {
        let missing = missing_targets(odm, w.collection).await?;
        if missing.is_empty() {
            continue;
        }
        dangling += missing.len() as u64;
        let keys = missing.into_iter().map(|id| doc! { "_id": id }).collect();
        violations.extend(crate::relations::after_deleted(odm, w.collection, keys).await?);
    }
    let mut subsets = Vec::new();
    for w in watched {
        let mains = catalog
            .models()
            .iter()
            .filter(|e| e.collection == w.collection);
        for main in mains {
            let details = catalog
                .models()
                .iter()
                .filter(|d| d.subset_of == Some(main.type_name));
            for d in details {
                subsets.push(crate::subset::repair_by_name(odm, w.collection, d.collection).await?);
            }
        }
    }
    Ok(HistoryLost {
        message,
        copies,
        trees,
        dangling,
        violations,
        subsets,
    })
}

/// The ids other documents reference in `collection` (through plain references; DBRefs are
/// left to the copies' sweep) that no document of it has. Per reference field one `distinct`,
/// then one `find` of the ids per [chunk](crate::batch).
async fn missing_targets(odm: &Odm, collection: &str) -> Result<Vec<Bson>> {
    let mut referenced: Vec<Bson> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in odm.catalog().references_to(collection) {
        if r.dbref.is_some() {
            continue;
        }
        let values = odm
            .database()
            .collection::<bson::Document>(r.from)
            .distinct(
                r.path.as_str(),
                doc! { r.path.as_str(): { "$ne": Bson::Null } },
            )
            .await
            .map_err(|e| Error::from_driver(r.from, e))?;
        for v in values {
            if seen.insert(crate::document::IdKey::of(&v)) {
                referenced.push(v);
            }
        }
    }
    let mut found = std::collections::HashSet::new();
    for chunk in crate::batch::chunks_of(&referenced) {
        let options = mongodb::options::FindOptions::builder()
            .projection(doc! { "_id": 1 })
            .build();
        let docs = crate::engine::find_documents(
            odm,
            collection,
            crate::literal::is_in("_id", chunk),
            options,
            None,
        )
        .await?;
        for d in docs {
            if let Some(id) = d.get("_id") {
                found.insert(crate::document::IdKey::of(id));
            }
        }
    }
    Ok(referenced
        .into_iter()
        .filter(|id| !found.contains(&crate::document::IdKey::of(id)))
        .collect())
}
