//! Copies of copies: when the cascade writes a copy that other copies take from, those follow,
//! level after level (`users.display_name` -> `comments.author_name` ->
//! `posts.latest_comments[].author_name` -> ...).
//!
//! Each level is a bounded number of commands, whatever the number of documents: one `find`
//! of the documents whose copy was just written (their ids, and what the next copies take from
//! them), then, per next copy, what the first level sends (one `update` per distinct new
//! value, with array filters for arrays of summaries); a latest-N array is updated in place
//! (one `update` per distinct new value, array filters on the summaries' `_id`), or recomputed
//! from its sources when the field written is one of its sort keys. Nothing is sent when
//! nothing copies the copy written.
//!
//! The values cascaded below the first level are the values the first level wrote, not values
//! read back from the documents in between: a concurrent cascade of the same source may
//! overwrite the level in between at any moment, and a level written from what another writer
//! left there would escape the re-reading that makes every cascade converge on the source's
//! last value (see `cascade::converge`).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;

use bson::{doc, Bson, Document};
use mongodb::options::{FindOptions, UpdateOptions};
use mongodb::ClientSession;

use super::graph::{check_copies_in, next_level, overlaps, written_paths};
use super::values::{within, write_copy, Failures};
use super::{CopyInfo, CopyKind};
use crate::document::get_path;
use crate::document::IdKey;
use crate::engine::find_documents;
use crate::{Odm, Result};

/// Adds `path` to a projection, unless it or a path above it is there (MongoDB refuses a
/// projection of both `a` and `a.b`); a path below it is replaced.
fn project(projection: &mut Document, path: &str) {
    if projection
        .keys()
        .any(|k| k == path || path.starts_with(&format!("{k}.")))
    {
        return;
    }
    let below: Vec<String> = projection
        .keys()
        .filter(|k| k.starts_with(&format!("{path}.")))
        .cloned()
        .collect();
    for k in below {
        projection.remove(&k);
    }
    projection.insert(path, 1);
}

/// Sets the value at a dotted path, creating the documents on the way.
fn set_path(doc: &mut Document, path: &str, value: Bson) {
    match path.split_once('.') {
        None => {
            doc.insert(path, value);
        }
        Some((head, rest)) => {
            if !matches!(doc.get(head), Some(Bson::Document(_))) {
                doc.insert(head, Document::new());
            }
            if let Some(Bson::Document(inner)) = doc.get_mut(head) {
                set_path(inner, rest, value);
            }
        }
    }
}

/// The source a document's copy `copy` was taken from (not for arrays).
fn source_of<'d>(doc: &'d Document, copy: &CopyInfo) -> Option<&'d Bson> {
    match &copy.kind {
        CopyKind::Flat { via } => get_path(doc, via),
        CopyKind::Summary {
            array: false, id, ..
        } => get_path(doc, &format!("{}.{id}", copy.path)),
        _ => None,
    }
}

/// What one level wrote: the copy, which of its documents, and the values it wrote there per
/// source (by path inside the copy), when they are known.
pub(crate) struct Written<'a> {
    /// The copy written.
    pub(crate) copy: &'a CopyInfo,
    /// The documents of `copy.dependent` whose copy was written.
    pub(crate) filter: Document,
    /// Per source id, the values written (`to` -> value); empty for a latest-N array, whose
    /// values are read.
    pub(crate) values: Vec<(Bson, Document)>,
}

type Boxed<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

/// Cascades what `written` wrote to the copies of it, and so on down: one `find` of the
/// documents written, then per next copy its updates (see the module). Nothing when nothing
/// copies `written.copy`. In `session` when given.
pub(crate) fn follow<'a>(
    odm: &'a Odm,
    written: Written<'a>,
    mut session: Option<&'a mut ClientSession>,
) -> Boxed<'a> {
    Box::pin(async move {
        let next = next_level(odm.catalog(), written.copy);
        if next.is_empty() {
            return Ok(());
        }
        check_copies_in(odm.catalog())?;
        let copy = written.copy;
        let written_here = written_paths(copy);
        let mut projection = doc! { "_id": 1 };
        for n in &next {
            for (from, _) in &n.fields {
                // A latest-N summary is updated in place in the fields written only; other
                // copies are set whole.
                let latest = matches!(n.kind, CopyKind::Latest { .. });
                if !latest || written_here.iter().any(|w| overlaps(from, w)) {
                    project(&mut projection, from);
                }
            }
            if let CopyKind::Latest { via, .. } = &n.kind {
                project(&mut projection, via);
            }
        }
        match &copy.kind {
            CopyKind::Flat { via } => project(&mut projection, via),
            CopyKind::Summary { .. } => project(&mut projection, &copy.path),
            CopyKind::Latest { .. } => {}
        }
        let options = FindOptions::builder().projection(projection).build();
        let mut docs = find_documents(
            odm,
            copy.dependent,
            written.filter.clone(),
            options,
            session.as_deref_mut(),
        )
        .await?;
        if docs.is_empty() {
            return Ok(());
        }
        // What this writer wrote, over what the documents hold now (see the module).
        let by_source: HashMap<IdKey, &Document> = written
            .values
            .iter()
            .map(|(id, v)| (IdKey::of(id), v))
            .collect();
        if !by_source.is_empty() {
            for d in &mut docs {
                let Some(values) = source_of(d, copy).and_then(|s| by_source.get(&IdKey::of(s)))
                else {
                    continue;
                };
                for (to, v) in values.iter() {
                    let path = if to.is_empty() {
                        copy.path.clone()
                    } else {
                        format!("{}.{to}", copy.path)
                    };
                    set_path(d, &path, v.clone());
                }
            }
        }
        let (latest, others): (Vec<CopyInfo>, Vec<CopyInfo>) = next
            .into_iter()
            .partition(|n| matches!(n.kind, CopyKind::Latest { .. }));
        let mut failures = Failures::default();
        if !others.is_empty() {
            match cascade_values(odm, &docs, &others, session.as_deref_mut()).await {
                Ok(()) => {}
                Err(e) if session.is_some() => return Err(e),
                Err(e) => failures.push(e),
            }
        }
        for n in &latest {
            match latest_level(odm, n, &written_here, &docs, session.as_deref_mut()).await {
                Ok(()) => {}
                Err(e) if session.is_some() => return Err(e),
                Err(e) => failures.push(e),
            }
        }
        failures.into_result()
    })
}

/// The summaries given the same new values: (`$set`, `$unset`, their sources, each with its
/// parent).
type InPlace = (Document, Document, Vec<(Bson, Bson)>);

/// A latest-N array `copy` whose sources `docs` had `written` changed: updated in place, or
/// recomputed when a sort key changed; then whatever copies the array follows.
async fn latest_level(
    odm: &Odm,
    copy: &CopyInfo,
    written: &[String],
    docs: &[Document],
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    let CopyKind::Latest { via, sort, .. } = &copy.kind else {
        return Ok(());
    };
    let mut parents = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in docs {
        if let Some(p) = get_path(d, via).filter(|p| **p != Bson::Null) {
            if seen.insert(IdKey::of(p)) {
                parents.push(p.clone());
            }
        }
    }
    if parents.is_empty() {
        return Ok(());
    }
    let mut failures = Failures::default();
    if sort.keys().any(|k| written.iter().any(|w| overlaps(k, w))) {
        // The order may change: recompute the arrays from the sources.
        match super::latest::refresh(odm, copy, parents.clone(), session.as_deref_mut()).await {
            // A source of the wrong type is left out of the arrays (the sweep reports it).
            Ok(_) => {}
            Err(e) if session.is_some() => return Err(e),
            Err(e) => failures.push(e),
        }
    } else {
        // Same order, new values: set them in place in the summaries of these sources.
        let groups = in_place_groups(copy, via, written, docs);
        for (_, (set, unset, pairs)) in groups {
            let mut update = Document::new();
            if !set.is_empty() {
                update.insert("$set", set);
            }
            if !unset.is_empty() {
                update.insert("$unset", unset);
            }
            let parent_of: HashMap<IdKey, Bson> = pairs
                .iter()
                .map(|(id, parent)| (IdKey::of(id), parent.clone()))
                .collect();
            let ids = pairs.into_iter().map(|(id, _)| id).collect();
            // The sources' ids go in the array filter, their parents' in the filter: a quarter
            // of the budget for the sources leaves room for parents of any size but theirs.
            for chunk in crate::batch::chunks_within(
                ids,
                crate::batch::MAX_IDS_BYTES / 4,
                crate::batch::MAX_IDS,
            ) {
                let mut parents = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for id in &chunk {
                    if let Some(p) = parent_of.get(&IdKey::of(id)) {
                        if seen.insert(IdKey::of(p)) {
                            parents.push(p.clone());
                        }
                    }
                }
                let options = UpdateOptions::builder()
                    .array_filters(vec![crate::literal::is_in("copy._id", chunk)])
                    .build();
                let filter = crate::literal::is_in("_id", parents);
                let outcome = super::values::update_copies(
                    odm,
                    copy.dependent,
                    filter,
                    update.clone(),
                    options,
                    session.as_deref_mut(),
                )
                .await;
                match outcome {
                    Ok(_) => super::record_write(copy),
                    // In a transaction the server has aborted it: nothing more can be written.
                    Err(e) if session.is_some() => return Err(e),
                    // Outside one, the other parents are still updated; these are reported.
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    for chunk in crate::batch::chunks_of(&parents) {
        let level = Written {
            copy,
            filter: crate::literal::is_in("_id", chunk),
            values: Vec::new(),
        };
        match follow(odm, level, session.as_deref_mut()).await {
            Ok(()) => {}
            Err(e) if session.is_some() => return Err(e),
            Err(e) => failures.push(e),
        }
    }
    failures.into_result()
}

/// The sources of `docs` grouped by the `$set` and `$unset` of the copied fields `written`
/// changed in their summaries, each with its sources' ids and parents: one update per group.
fn in_place_groups(
    copy: &CopyInfo,
    via: &str,
    written: &[String],
    docs: &[Document],
) -> BTreeMap<Vec<u8>, InPlace> {
    let changed: Vec<&(String, String)> = copy
        .fields
        .iter()
        .filter(|(from, _)| written.iter().any(|w| overlaps(from, w)))
        .collect();
    let mut groups: BTreeMap<Vec<u8>, InPlace> = BTreeMap::new();
    for d in docs {
        let (Some(id), Some(parent)) = (d.get("_id"), get_path(d, via)) else {
            continue;
        };
        let mut set = Document::new();
        let mut unset = Document::new();
        for (from, to) in &changed {
            let target = format!("{}.$[copy].{to}", copy.path);
            // A missing field is left out of a summary, as the recomputing `$topN` does.
            match get_path(d, from) {
                Some(v) => set.insert(target, v.clone()),
                None => unset.insert(target, ""),
            };
        }
        let key = bson::serialize_to_vec(&doc! { "s": &set, "u": &unset }).unwrap_or_default();
        let group = groups
            .entry(key)
            .or_insert_with(|| (set, unset, Vec::new()));
        group.2.push((id.clone(), parent.clone()));
    }
    groups
}

/// One `update_many` per copy, distinct new value and [chunk](crate::batch) of source ids (see
/// `values`); then the copies of those copies, level after level (one `find` and the same
/// updates per level; nothing when nothing copies them).
pub(super) async fn cascade_values(
    odm: &Odm,
    sources: &[Document],
    copies: &[CopyInfo],
    session: Option<&mut ClientSession>,
) -> Result<()> {
    cascade_values_within(odm, sources, copies, None, session).await
}

/// [`cascade_values`] into the dependents matching `scope` only (the documents one write
/// wrote, when it settles its own copies), and the copies of them.
pub(super) async fn cascade_values_within(
    odm: &Odm,
    sources: &[Document],
    copies: &[CopyInfo],
    scope: Option<&Document>,
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    let mut failures = Failures::default();
    let mut progress = odm.track(
        crate::progress::Task::Cascade,
        crate::progress::Unit::Sources,
        || {
            let into: Vec<String> = copies
                .iter()
                .map(|c| format!("{}.{}", c.dependent, c.path))
                .collect();
            let from = copies.first().map_or("", |c| c.source);
            format!("{from} into {}", into.join(", "))
        },
        Some((sources.len() * copies.len()) as u64),
    );
    for copy in copies {
        let written = write_copy(
            odm,
            sources,
            copy,
            scope,
            session.as_deref_mut(),
            &mut failures,
            &mut progress,
        )
        .await?;
        let written_ids: Vec<Bson> = written.iter().map(|(id, _)| id.clone()).collect();
        // The copies of this copy, one chunk of the sources' ids at a time (one chunk but for
        // very large cascades).
        for chunk in crate::batch::chunks_of(&written_ids) {
            let keys: std::collections::HashSet<IdKey> = chunk.iter().map(IdKey::of).collect();
            let values = written
                .iter()
                .filter(|(id, _)| keys.contains(&IdKey::of(id)))
                .cloned()
                .collect();
            let level = Written {
                copy,
                filter: within(copy.dependents_of(&chunk), scope),
                values,
            };
            match follow(odm, level, session.as_deref_mut()).await {
                Ok(()) => {}
                Err(e) if session.is_some() => return Err(e),
                Err(e) => failures.push(e),
            }
        }
    }
    progress.finish();
    failures.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::denormalize::graph::find_cycle;

    fn flat(dependent: &'static str, path: &str, source: &'static str, from: &str) -> CopyInfo {
        CopyInfo::new(
            "T",
            dependent,
            path,
            source,
            CopyKind::Flat {
                via: "r".to_owned(),
            },
            vec![(from.to_owned(), String::new())],
        )
    }

    #[test]
    fn a_chain_has_no_cycle() {
        let copies = [
            flat("comments", "author_name", "users", "display_name"),
            flat("replies", "author_name", "comments", "author_name"),
        ];
        assert_eq!(find_cycle(&copies), None);
    }

    #[test]
    fn a_circle_is_named() {
        let copies = [
            flat("a", "b_name", "b", "name"),
            flat("b", "name", "a", "b_name"),
        ];
        let cycle = find_cycle(&copies).unwrap();
        assert_eq!(cycle.first(), cycle.last());
        assert_eq!(cycle.len(), 3);
        assert!(cycle.contains(&"a.b_name".to_owned()) && cycle.contains(&"b.name".to_owned()));
    }

    #[test]
    fn a_copy_of_its_own_copy_is_a_cycle() {
        let copies = [flat("categories", "root_name", "categories", "root_name")];
        assert_eq!(
            find_cycle(&copies).unwrap(),
            ["categories.root_name", "categories.root_name"]
        );
    }

    #[test]
    fn copying_another_field_of_the_same_model_is_no_cycle() {
        let copies = [flat("categories", "parent_name", "categories", "name")];
        assert_eq!(find_cycle(&copies), None);
    }

    #[test]
    fn projections_never_collide() {
        let mut p = doc! { "_id": 1 };
        project(&mut p, "author.name");
        project(&mut p, "author");
        project(&mut p, "author.id");
        project(&mut p, "post");
        assert_eq!(p, doc! { "_id": 1, "author": 1, "post": 1 });
    }
}
