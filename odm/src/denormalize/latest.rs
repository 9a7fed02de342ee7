//! Keeping latest-N arrays right when their sources change or go.
//!
//! Inserting a source pushes its summary (`$push` with `$each`, `$sort`, `$slice`). Every
//! other change that can alter a parent's array (a source deleted, moved to another parent,
//! or given another value of a copied or sort field) recomputes the arrays of the parents
//! concerned from the sources: one `aggregate` grouping the parents' sources with `$topN`,
//! then one `update` per parent setting its array. Each summary carries its source's `_id`,
//! so that the recomputed array is exactly what the pushes would have built. An update or a
//! replacement of a source that changes nothing else the ODM maintains runs with these
//! recomputations in one transaction (see [`crate::ops::UpdateOp`]). There each parent's
//! `update` writes the parent even when its array comes out as it was (a marker field set and
//! removed, in two statements of one command), so that recomputations of one parent from
//! different snapshots always conflict.

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::{CopyInfo, CopyKind};
use crate::document::{get_path, overlaps, IdKey};
use crate::engine::{Effect, Own};
use crate::{Error, Odm, Result};

/// The direction of one sort key: 1 or -1.
fn dir(v: &Bson) -> i32 {
    if v.as_i32() == Some(-1) || v.as_i64() == Some(-1) {
        -1
    } else {
        1
    }
}

/// Whether the stored array is in descending order of the sort (then the latest are first).
pub(super) fn descending(sort: &Document) -> bool {
    sort.values().any(|v| dir(v) == -1)
}

/// The summary of one source, as pushed: its `_id`, then the copied fields it has (a missing
/// field is left out, as the recomputing `$topN` leaves it out).
pub(super) fn summary_of(source: &Document, copy: &CopyInfo) -> Document {
    let mut summary = doc! { "_id": source.get("_id").cloned().unwrap_or(Bson::Null) };
    for (from, to) in &copy.fields {
        if let Some(v) = get_path(source, from) {
            summary.insert(to.clone(), v.clone());
        }
    }
    summary
}

/// `sort` with `_id` as the last key, in the direction of the first: sources with equal sort
/// values are kept and ordered the same way by the pushes and by the recomputation.
fn with_tiebreak(sort: &Document) -> Document {
    let mut sort = sort.clone();
    if !sort.contains_key("_id") {
        let first = sort.values().next().map_or(1, dir);
        sort.insert("_id", first);
    }
    sort
}

/// The `$sort` of a push: the source's sort keys as the summary stores them (a copied field
/// may be stored under another name), with the `_id` tie-breaker.
pub(super) fn push_sort(copy: &CopyInfo, sort: &Document) -> Document {
    with_tiebreak(sort)
        .into_iter()
        .map(|(k, v)| {
            let stored = copy
                .fields
                .iter()
                .find(|(from, _)| *from == k)
                .map_or(k, |(_, to)| to.clone());
            (stored, v)
        })
        .collect()
}

/// The latest-N copies taken from `source` that a write of `paths` may change: a copied field,
/// a sort field, or the reference to the parent.
pub(crate) fn latest_touched(
    catalog: &crate::catalog::Catalog,
    source: &str,
    paths: &[&str],
) -> Vec<CopyInfo> {
    catalog
        .copies_from(source)
        .iter()
        .filter(|c| match &c.kind {
            CopyKind::Latest { via, sort, .. } => {
                // The empty path stands for a whole replacement.
                paths.iter().any(|p| {
                    p.is_empty()
                        || c.is_touched_by(p)
                        || overlaps(p, via)
                        || sort.keys().any(|k| overlaps(p, k))
                })
            }
            _ => false,
        })
        .cloned()
        .collect()
}

/// The parents of the sources matching `filter`, per latest copy: one `find` projecting the
/// references (nothing when `copies` is empty).
pub(crate) async fn parents_of(
    odm: &Odm,
    source: &str,
    filter: Document,
    copies: &[CopyInfo],
    session: Option<&mut ClientSession>,
) -> Result<Vec<Vec<Bson>>> {
    if copies.is_empty() {
        return Ok(Vec::new());
    }
    let mut projection = doc! { "_id": 1 };
    for c in copies {
        if let CopyKind::Latest { via, .. } = &c.kind {
            projection.insert(via.as_str(), 1);
        }
    }
    let options = FindOptions::builder().projection(projection).build();
    let docs = crate::engine::find_documents(odm, source, filter, options, session).await?;
    Ok(copies
        .iter()
        .map(|c| {
            let CopyKind::Latest { via, .. } = &c.kind else {
                return Vec::new();
            };
            let mut parents = Vec::new();
            for d in &docs {
                if let Some(p) = get_path(d, via).filter(|b| **b != Bson::Null) {
                    add_parent(&mut parents, p.clone());
                }
            }
            parents
        })
        .collect())
}

/// Adds `parent` unless it is there.
pub(super) fn add_parent(parents: &mut Vec<Bson>, parent: Bson) {
    if parent != Bson::Null && !parents.iter().any(|p| IdKey::of(p) == IdKey::of(&parent)) {
        parents.push(parent);
    }
}

/// The arrays `parents` should hold, computed from the sources (see [`checked`]: a source
/// whose value the summary cannot hold is in none).
pub(crate) async fn expected(
    odm: &Odm,
    copy: &CopyInfo,
    parents: &[Bson],
    session: Option<&mut ClientSession>,
) -> Result<Vec<(Bson, Vec<Bson>)>> {
    Ok(checked(odm, copy, parents, session).await?.0)
}

/// The arrays `parents` should hold, computed from the sources, each summary checked against
/// the copy's type as a plain copy's values are: a source holding a value the summary cannot
/// decode (another program wrote it) is left out of every array, the next in the order taking
/// its place, and returned as its [`Error::Decode`] (naming the source, its `_id` and the
/// field). One `aggregate` per [chunk](crate::batch) of parents; when some summary is refused,
/// the same again without its source.
pub(crate) async fn checked(
    odm: &Odm,
    copy: &CopyInfo,
    parents: &[Bson],
    mut session: Option<&mut ClientSession>,
) -> Result<(Vec<(Bson, Vec<Bson>)>, Vec<Error>)> {
    let mut refused: Vec<Bson> = Vec::new();
    let mut errors = Vec::new();
    // Each round leaves out at least one more source, so this ends.
    loop {
        let arrays = computed(odm, copy, parents, &refused, session.as_deref_mut()).await?;
        let known = refused.len();
        for summary in arrays.iter().flat_map(|(_, docs)| docs) {
            let Some(summary) = summary.as_document() else {
                continue;
            };
            if let Err(e) = check_summary(copy, summary) {
                refused.extend(summary.get("_id").cloned());
                errors.push(e);
            }
        }
        if refused.len() == known {
            return Ok((arrays, errors));
        }
    }
}

/// A summary as [`computed`] builds it (its source's `_id` and the copied fields, by their
/// names in the summary), checked against the copy's type.
fn check_summary(copy: &CopyInfo, summary: &Document) -> Result<()> {
    for (from, to) in &copy.fields {
        copy.check_value(summary, from, &crate::document::value_at(summary, to))?;
    }
    Ok(())
}

/// The arrays `parents` should hold, computed from the sources but those `refused`: one
/// `aggregate` per [chunk](crate::batch) of parents.
async fn computed(
    odm: &Odm,
    copy: &CopyInfo,
    parents: &[Bson],
    refused: &[Bson],
    session: Option<&mut ClientSession>,
) -> Result<Vec<(Bson, Vec<Bson>)>> {
    let CopyKind::Latest { via, n, sort } = &copy.kind else {
        return Ok(Vec::new());
    };
    // The latest are the first `n` in the order that puts them first.
    let sort = &with_tiebreak(sort);
    let latest_first: Document = if descending(sort) {
        sort.clone()
    } else {
        sort.iter()
            .map(|(k, v)| (k.clone(), Bson::Int32(-dir(v))))
            .collect()
    };
    let mut output = doc! { "_id": "$_id" };
    for (from, to) in &copy.fields {
        output.insert(to.clone(), format!("${from}"));
    }
    let coll = odm.own_database().collection::<Document>(copy.source);
    let error = |e| Error::from_driver(copy.source, e);
    let mut session = session;
    let mut groups: Vec<Document> = Vec::new();
    for chunk in crate::batch::chunks_of(parents) {
        let mut matching = crate::literal::is_in(via, chunk);
        if !refused.is_empty() {
            matching.extend(crate::literal::not_in("_id", refused.to_vec()));
        }
        let pipeline = vec![
            doc! { "$match": matching },
            doc! { "$group": {
                "_id": format!("${via}"),
                "docs": { "$topN": { "n": i64::from(*n), "sortBy": latest_first.clone(), "output": output.clone() } },
            } },
        ];
        let action = coll.aggregate(pipeline);
        let part: Vec<Document> = match session.as_deref_mut() {
            None => action
                .await
                .map_err(error)?
                .try_collect()
                .await
                .map_err(error)?,
            Some(s) => {
                let mut cursor = action.session(&mut *s).await.map_err(error)?;
                cursor.stream(s).try_collect().await.map_err(error)?
            }
        };
        groups.extend(part);
    }
    let mut by_parent: Vec<(Bson, Vec<Bson>)> =
        parents.iter().map(|p| (p.clone(), Vec::new())).collect();
    for mut group in groups {
        let key = IdKey::of(group.get("_id").unwrap_or(&Bson::Null));
        let Ok(mut docs) = group.get_array_mut("docs").map(std::mem::take) else {
            continue;
        };
        if !descending(sort) {
            docs.reverse();
        }
        if let Some(slot) = by_parent.iter_mut().find(|(p, _)| IdKey::of(p) == key) {
            slot.1 = docs;
        }
    }
    Ok(by_parent)
}

/// Recomputes the latest-N arrays of `parents` from their sources: one `aggregate`, then one
/// `update` per parent. In the caller's session when given; else in a transaction of its own
/// when the deployment has them (retried on write conflicts, so that a summary pushed
/// concurrently is never overwritten), else as two plain commands. Returns the sources left
/// out of the arrays, their values refused by the summary's type (see [`checked`]).
pub(crate) async fn refresh(
    odm: &Odm,
    copy: &CopyInfo,
    parents: Vec<Bson>,
    session: Option<&mut ClientSession>,
) -> Result<Vec<Error>> {
    if parents.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(s) = session {
        return refresh_in(odm, copy, &parents, Some(s)).await;
    }
    if !odm.supports_transactions().await? {
        return refresh_in(odm, copy, &parents, None).await;
    }
    crate::transaction::in_transaction(odm, &(copy, parents), |odm, s, (copy, parents)| {
        Box::pin(refresh_in(odm, copy, parents, Some(s)))
    })
    .await
}

async fn refresh_in(
    odm: &Odm,
    copy: &CopyInfo,
    parents: &[Bson],
    mut session: Option<&mut ClientSession>,
) -> Result<Vec<Error>> {
    let (arrays, refused) = checked(odm, copy, parents, session.as_deref_mut()).await?;
    for (parent, docs) in arrays {
        let filter = crate::literal::eq("_id", parent.clone());
        let set = doc! { copy.path.as_str(): docs };
        // In a transaction the parent is written even when its array comes out as it was: a
        // write that changes nothing conflicts with nothing, and a concurrent recomputation
        // from a snapshot without this transaction's source change would stand.
        if let Some(s) = session.as_deref_mut() {
            super::claim::set_claiming(odm, copy.dependent, filter, set, s).await?;
            continue;
        }
        let write = Own::update(
            copy.dependent,
            filter,
            doc! { "$set": set },
            Effect::Derived,
            "latest-N refresh",
        );
        let write = write.one().showing(crate::error::show_id(Some(&parent)));
        odm.write_own(write, session.as_deref_mut()).await?;
    }
    Ok(refused)
}

/// Around a write of `source` that may change latest-N arrays: the parents before the write
/// (one `find`), to which the write adds the parents it sets, refreshed after the write.
#[derive(Debug, Default)]
pub(crate) struct LatestRefresh {
    copies: Vec<CopyInfo>,
    parents: Vec<Vec<Bson>>,
}

impl LatestRefresh {
    /// Reads the parents of what `filter` matches, for the latest copies a write of `paths`
    /// changes; sends nothing when it changes none.
    pub(crate) async fn before(
        odm: &Odm,
        source: &str,
        filter: &Document,
        paths: &[&str],
        session: Option<&mut ClientSession>,
    ) -> Result<LatestRefresh> {
        let copies = latest_touched(odm.catalog(), source, paths);
        // Most updates touch no latest-N array: no copy of their filter.
        if copies.is_empty() {
            return Ok(LatestRefresh {
                copies,
                parents: Vec::new(),
            });
        }
        let parents = parents_of(odm, source, filter.clone(), &copies, session).await?;
        Ok(LatestRefresh { copies, parents })
    }

    /// Whether the write may change a latest-N array.
    pub(crate) fn is_active(&self) -> bool {
        !self.copies.is_empty()
    }

    /// Adds the parent each copy's reference takes in `written` (an update's `$set` or a
    /// replacement document), when it sets one.
    pub(crate) fn add_written(&mut self, written: &Document) {
        for (copy, parents) in self.copies.iter().zip(self.parents.iter_mut()) {
            if let CopyKind::Latest { via, .. } = &copy.kind {
                if let Some(p) = get_path(written, via) {
                    add_parent(parents, p.clone());
                }
            }
        }
    }

    /// Recomputes the arrays of every parent noted.
    pub(crate) async fn run(
        self,
        odm: &Odm,
        mut session: Option<&mut ClientSession>,
    ) -> Result<()> {
        for (copy, parents) in self.copies.iter().zip(self.parents) {
            let refresh = refresh(odm, copy, parents, session.as_deref_mut());
            crate::trace::step!("latest", copy.dependent, refresh).await?;
        }
        Ok(())
    }
}

/// After sources were inserted: pushes a summary of each onto its parent's `latest` array,
/// `$push` with `$each`, `$sort` and `$slice: -n`. One `update` per distinct parent, which
/// matches only while none of these summaries is there: a concurrent recomputation of the
/// array that already took them in is not doubled. When it does not match (the summaries, or
/// some, are there already), the parent's array is recomputed instead (one `aggregate`, one
/// `update`).
pub(crate) async fn push_latest(
    odm: &Odm,
    copies: &[CopyInfo],
    inserted: &[Document],
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    for copy in copies {
        let CopyKind::Latest { via, n, sort } = &copy.kind else {
            continue;
        };
        let mut by_parent: Vec<(IdKey, Bson, Vec<Bson>)> = Vec::new();
        for doc in inserted {
            let Some(parent) = get_path(doc, via).filter(|b| **b != Bson::Null) else {
                continue;
            };
            let summary = summary_of(doc, copy);
            let key = IdKey::of(parent);
            match by_parent.iter_mut().find(|(k, _, _)| *k == key) {
                Some((_, _, list)) => list.push(Bson::Document(summary)),
                None => by_parent.push((key, parent.clone(), vec![Bson::Document(summary)])),
            }
        }
        let mut again = Vec::new();
        for (_, parent, summaries) in by_parent {
            let ids: Vec<Bson> = summaries
                .iter()
                .filter_map(|s| s.as_document().and_then(|d| d.get("_id")).cloned())
                .collect();
            let update = doc! { "$push": { copy.path.as_str(): {
                "$each": summaries,
                "$sort": push_sort(copy, sort),
                // Sorted ascending the last N are at the end; descending, at the start.
                "$slice": if descending(sort) { i64::from(*n) } else { -i64::from(*n) },
            } } };
            let mut filter = crate::literal::eq("_id", parent.clone());
            filter.extend(crate::literal::not_in(&format!("{}._id", copy.path), ids));
            let write = Own::update(
                copy.dependent,
                filter,
                update,
                Effect::Derived,
                "latest-N push",
            );
            let result = odm.write_own(write.one(), session.as_deref_mut()).await?;
            if result.matched == 0 {
                again.push(parent);
            }
        }
        // Parents that did not match: already holding some of these summaries, or gone (then
        // the recomputation finds nothing to update).
        refresh(odm, copy, again, session.as_deref_mut()).await?;
    }
    Ok(())
}
