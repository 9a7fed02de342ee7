//! A batch of events turned into maintenance: what each event calls for is noted (deduplicated
//! by document), then applied per collection, each effect reading the present state so that
//! an event applied twice, or one whose effect an ODM write already made, changes nothing.

use std::collections::{BTreeMap, HashSet};

use bson::{Bson, Document};
use tracing::Instrument;

use super::watch::Watched;
use super::FollowerReport;
use crate::catalog::CopyInfo;
use crate::document::IdKey;
use crate::{Odm, Result};

/// Ids without repeats, in the order first seen.
#[derive(Default)]
struct Ids {
    seen: HashSet<IdKey>,
    list: Vec<Bson>,
}

impl Ids {
    fn add(&mut self, id: &Bson) {
        if self.seen.insert(IdKey::of(id)) {
            self.list.push(id.clone());
        }
    }
}

/// Copies without repeats (by dependent and path).
fn add_copies(into: &mut Vec<CopyInfo>, copies: Vec<CopyInfo>) {
    for c in copies {
        if !into
            .iter()
            .any(|k| k.dependent == c.dependent && k.path == c.path)
        {
            into.push(c);
        }
    }
}

/// What the events of one collection call for.
#[derive(Default)]
struct Pending {
    /// Sources whose copied fields changed, and the copies concerned.
    cascade: Ids,
    copies: Vec<CopyInfo>,
    /// Latest-N arrays and the sources that may have entered, moved or left them.
    latest: Vec<(CopyInfo, Ids)>,
    /// Documents deleted, as their keys, when a delete of them has rules.
    deleted: Vec<Document>,
    deleted_ids: Ids,
    /// Tree nodes written.
    tree: Ids,
    /// Tree nodes deleted.
    tree_deleted: Ids,
    /// Children of two-way references whose reference may have changed (or that were
    /// deleted), by the index of the reference in [`Watched::two_way`].
    two_way: BTreeMap<usize, Ids>,
}

impl Pending {
    /// Keeps, of the documents noted as deleted, those absent now. A delete event says what
    /// was true when it was written: a document another program deleted, then inserted again
    /// (in this batch, between two batches, or before a replay of the events), is there now,
    /// and the effects of its delete (its rules, its subset details, its subtree) must not be
    /// applied to it. One `find` of `_id: {$in: ids}` per [chunk](crate::batch) of the
    /// collection's deleted ids, none when there are none.
    async fn keep_absent(&mut self, odm: &Odm, collection: &str) -> Result<()> {
        let mut ids = Ids::default();
        for id in self.deleted_ids.list.iter().chain(&self.tree_deleted.list) {
            ids.add(id);
        }
        if ids.list.is_empty() {
            return Ok(());
        }
        let absent: HashSet<IdKey> = super::pairs::missing_in(odm, collection, ids.list)
            .await?
            .iter()
            .map(IdKey::of)
            .collect();
        let gone = |id: &Bson| absent.contains(&IdKey::of(id));
        self.deleted.retain(|key| key.get("_id").is_some_and(gone));
        self.deleted_ids = retained(std::mem::take(&mut self.deleted_ids), gone);
        self.tree_deleted = retained(std::mem::take(&mut self.tree_deleted), gone);
        Ok(())
    }
}

/// The ids of `ids` that `keep` keeps.
fn retained(ids: Ids, keep: impl Fn(&Bson) -> bool) -> Ids {
    let mut out = Ids::default();
    for id in ids.list.iter().filter(|id| keep(id)) {
        out.add(id);
    }
    out
}

/// The maintenance a batch of events calls for, by collection.
#[derive(Default)]
pub(crate) struct Batch {
    pending: BTreeMap<&'static str, Pending>,
    /// The details' collections of each main side of a subset pair, by main collection.
    details: BTreeMap<&'static str, Vec<&'static str>>,
    /// The two-way references whose children live in a collection, by collection.
    two_way: BTreeMap<&'static str, Vec<crate::relations::TwoWay>>,
    /// Sides of subset pairs written alone.
    alone: super::pairs::Alone,
    /// How long a side found alone is given to be joined by the other.
    settle: std::time::Duration,
}

/// The changed fields of an update event: its updated and removed fields' names.
fn changed(event: &Document) -> Vec<String> {
    let Ok(desc) = event.get_document("updateDescription") else {
        return Vec::new();
    };
    let mut paths: Vec<String> = desc
        .get_document("updatedFields")
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default();
    if let Ok(removed) = desc.get_array("removedFields") {
        paths.extend(removed.iter().filter_map(|b| b.as_str().map(str::to_owned)));
    }
    paths
}

fn overlaps(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

impl Batch {
    /// A batch whose subset sides found alone are looked at again after `settle`.
    pub(crate) fn new(settle: std::time::Duration) -> Self {
        Batch {
            settle,
            ..Batch::default()
        }
    }

    /// Notes what `event` (on the watched collection `w`) calls for; `false` when nothing.
    pub(crate) fn note(&mut self, odm: &Odm, w: &Watched, event: &Document) -> bool {
        let op = event.get_str("operationType").unwrap_or_default();
        let Ok(key) = event.get_document("documentKey") else {
            return false;
        };
        let Some(id) = key.get("_id") else {
            return false;
        };
        let paths = match op {
            "update" => Some(changed(event)),
            "insert" | "replace" | "delete" => None,
            _ => return false,
        };
        if !w.details.is_empty() {
            self.details.insert(w.collection, w.details.clone());
        }
        if !w.two_way.is_empty() {
            self.two_way.insert(w.collection, w.two_way.clone());
        }
        let paired = self.note_pair(w, op, id);
        let p = self.pending.entry(w.collection).or_default();
        let mut any = paired;
        if w.copied {
            let (cascaded, latest) =
                crate::denormalize::touched_paths(odm, w.collection, paths.as_deref());
            // An insert gives no copy yet, and a deleted source's summaries go with its rules.
            if !cascaded.is_empty() && matches!(op, "update" | "replace") {
                p.cascade.add(id);
                add_copies(&mut p.copies, cascaded);
                any = true;
            }
            for copy in latest {
                let at = match p
                    .latest
                    .iter()
                    .position(|(c, _)| c.dependent == copy.dependent && c.path == copy.path)
                {
                    Some(i) => i,
                    None => {
                        p.latest.push((copy, Ids::default()));
                        p.latest.len() - 1
                    }
                };
                p.latest[at].1.add(id);
                any = true;
            }
        }
        if op == "delete" && (w.rules || !w.details.is_empty()) {
            let known = p.deleted_ids.list.len();
            p.deleted_ids.add(id);
            if p.deleted_ids.list.len() > known {
                p.deleted.push(key.clone());
            }
            any = true;
        }
        for (i, pair) in w.two_way.iter().enumerate() {
            let moved = match &paths {
                None => true,
                Some(paths) => paths.iter().any(|p| overlaps(p, &pair.link)),
            };
            if moved {
                p.two_way.entry(i).or_default().add(id);
                any = true;
            }
        }
        if w.tree.is_some() && op == "delete" {
            p.tree_deleted.add(id);
            any = true;
        }
        if let (Some(tree), false) = (w.tree, op == "delete") {
            let moved = match &paths {
                None => true,
                Some(paths) => paths
                    .iter()
                    .any(|p| overlaps(p, tree.parent) || overlaps(p, tree.ancestors)),
            };
            if moved {
                p.tree.add(id);
                any = true;
            }
        }
        any
    }

    /// Notes a side of a subset pair written alone: details inserted (their main document
    /// must exist), a main document inserted or details deleted (the details must exist).
    fn note_pair(&mut self, w: &Watched, op: &str, id: &Bson) -> bool {
        let mut any = false;
        if let Some(main) = w.main {
            match op {
                "insert" => self.alone.details_inserted(w.collection, main, id),
                "delete" => self.alone.main_needs(main, w.collection, id),
                _ => return false,
            }
            any = true;
        }
        if op == "insert" {
            for d in &w.details {
                self.alone.main_needs(w.collection, d, id);
                any = true;
            }
        }
        any
    }

    /// Applies what was noted, collection by collection: subset details, cascades, delete
    /// rules, latest-N arrays, trees, two-way references; then the subset pairs written alone
    /// (see [`super::pairs`]). Counts what it did into `report`.
    pub(crate) async fn apply(self, odm: &Odm, report: &mut FollowerReport) -> Result<()> {
        for (collection, mut p) in self.pending {
            p.keep_absent(odm, collection).await?;
            let details = self.details.get(collection).cloned().unwrap_or_default();
            let two_way = self.two_way.get(collection).cloned().unwrap_or_default();
            let span = tracing::debug_span!(target: "odm", "follow", collection);
            let apply = async {
                apply_one(odm, collection, &p, &details, report).await?;
                apply_two_way(odm, &p, &two_way, report).await
            };
            apply.instrument(span).await?;
        }
        self.alone.finish(odm, self.settle, report).await
    }
}

/// The maintenance of one collection's events.
async fn apply_one(
    odm: &Odm,
    collection: &'static str,
    p: &Pending,
    details: &[&'static str],
    report: &mut FollowerReport,
) -> Result<()> {
    // The details of deleted main documents of subset pairs go with them, as an ODM delete of
    // the pair removes both sides.
    for d in details {
        report.details_deleted += delete_details(odm, d, &p.deleted_ids.list).await?;
    }
    if !p.cascade.list.is_empty() {
        let bad =
            crate::denormalize::cascade_sources(odm, collection, &p.cascade.list, p.copies.clone())
                .await?;
        let sources_left = bad.iter().filter(|b| b.collection == collection).count();
        report.cascaded += p.cascade.list.len().saturating_sub(sources_left) as u64;
        report_unapplied(bad, report);
    }
    if !p.deleted.is_empty() && crate::relations::has_rules(odm.catalog(), collection) {
        report.deleted += p.deleted.len() as u64;
        let violations =
            crate::relations::after_deleted(odm, collection, p.deleted.clone()).await?;
        report.violations.extend(violations);
    }
    for (copy, ids) in &p.latest {
        let (parents, refused) =
            crate::denormalize::refresh_latest_of(odm, copy, &ids.list).await?;
        report.latest_parents += parents;
        report_unapplied(refused, report);
    }
    let info = odm
        .catalog()
        .models()
        .iter()
        .find(|e| e.collection == collection)
        .and_then(|e| e.tree);
    if let (Some(info), false) = (info, p.tree_deleted.list.is_empty()) {
        let done = crate::tree::after_deleted(odm, collection, info, &p.tree_deleted.list).await?;
        report.tree_nodes += done.lifted;
        report.tree_deleted += done.deleted;
        report.violations.extend(done.restricted);
        report_malformed(collection, done.malformed, report);
    }
    if !p.tree.list.is_empty() {
        if let Some(info) = info {
            let done = crate::tree::repair_moved(odm, collection, info, &p.tree.list).await?;
            report.tree_nodes += done.nodes;
            report.tree_cycles.extend(done.cycles);
            report_malformed(collection, done.malformed, report);
        }
    }
    Ok(())
}

/// Deletes the details whose main documents `ids` were deleted: one `delete` per
/// [chunk](crate::batch) of ids. Returns how many were deleted.
async fn delete_details(odm: &Odm, details: &str, ids: &[Bson]) -> Result<u64> {
    let coll = odm.database().collection::<Document>(details);
    let mut n = 0;
    for chunk in crate::batch::chunks_of(ids) {
        n += coll
            .delete_many(crate::literal::is_in("_id", chunk))
            .await
            .map_err(|e| crate::Error::from_driver(details, e))?
            .deleted_count;
    }
    Ok(n)
}

/// The two-way references of one collection's children: each child moved, inserted, replaced
/// or deleted listed by the parent it names and by no other (see
/// [`crate::relations::settle`]). A parent whose array cannot take a child, or whose bounded
/// array is full, is reported in [`FollowerReport::bad_documents`].
async fn apply_two_way(
    odm: &Odm,
    p: &Pending,
    pairs: &[crate::relations::TwoWay],
    report: &mut FollowerReport,
) -> Result<()> {
    for (i, ids) in &p.two_way {
        let Some(pair) = pairs.get(*i) else {
            continue;
        };
        let done = crate::relations::settle(odm, pair, &ids.list).await?;
        report.two_way_parents += done.parents;
        let full = done.full.into_iter().map(|(parent, child)| {
            let max = pair.max.unwrap_or_default();
            let child = crate::error::show_id(Some(&child));
            (
                parent,
                format!("bounded to {max} children: child {child} left out"),
            )
        });
        for (parent, message) in done.malformed.into_iter().chain(full) {
            let bad = super::BadDocument {
                collection: pair.parent.to_owned(),
                id: crate::error::show_id(Some(&parent)),
                path: pair.array.clone(),
                message,
            };
            tracing::warn!(target: "odm", document = %bad, "follower: a two-way reference could not be applied");
            report.bad_documents.push(bad);
        }
    }
    Ok(())
}

/// Documents that could not be applied, reported in [`FollowerReport::bad_documents`] (and
/// logged at `warn`).
fn report_unapplied<E>(errors: Vec<E>, report: &mut FollowerReport)
where
    super::BadDocument: From<E>,
{
    for e in errors {
        let bad = super::BadDocument::from(e);
        tracing::warn!(target: "odm", document = %bad, "follower: a document could not be applied");
        report.bad_documents.push(bad);
    }
}

/// Tree nodes of `collection` left as they were, reported in
/// [`FollowerReport::bad_documents`] (and logged at `warn`).
fn report_malformed(
    collection: &str,
    malformed: Vec<crate::tree::Malformed>,
    report: &mut FollowerReport,
) {
    for m in malformed {
        let bad = super::BadDocument {
            collection: collection.to_owned(),
            id: crate::error::show_id(Some(&m.id)),
            path: m.path.to_owned(),
            message: m.message,
        };
        tracing::warn!(target: "odm", document = %bad, "follower: a tree node could not be applied");
        report.bad_documents.push(bad);
    }
}
