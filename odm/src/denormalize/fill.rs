//! Copies taken when documents are inserted.

use std::collections::{HashMap, HashSet};

use bson::{Bson, Document};
use mongodb::ClientSession;

use super::settle::Taken;
use super::{CopyInfo, CopyKind};
use crate::document::get_path;
use crate::document::IdKey;
use crate::{Error, Odm, Result};

/// The source ids a copy needs, for one document.
fn source_ids(doc: &Document, copy: &CopyInfo) -> Vec<Bson> {
    match &copy.kind {
        CopyKind::Summary {
            array: true, id, ..
        } => match doc.get(&copy.path) {
            Some(Bson::Array(items)) => items
                .iter()
                .filter_map(|i| i.as_document().and_then(|d| d.get(id)).cloned())
                .collect(),
            _ => Vec::new(),
        },
        CopyKind::Summary {
            array: false, id, ..
        } => doc
            .get_document(&copy.path)
            .ok()
            .and_then(|d| d.get(id))
            .cloned()
            .into_iter()
            .collect(),
        CopyKind::Flat { via } => get_path(doc, via)
            .filter(|b| **b != Bson::Null)
            .cloned()
            .into_iter()
            .collect(),
        CopyKind::Latest { .. } => Vec::new(),
    }
}

/// Source ids to fetch, per source collection, deduplicated.
#[derive(Default)]
pub(super) struct Wanted<'c> {
    by_source: Vec<WantedFrom<'c>>,
}

/// One source collection: the collection, the copies taken from it, the ids (and their keys).
type WantedFrom<'c> = (&'static str, Vec<&'c CopyInfo>, Vec<Bson>, HashSet<IdKey>);

impl<'c> Wanted<'c> {
    /// Notes that `copy` needs the source `id`.
    pub(super) fn add(&mut self, copy: &'c CopyInfo, id: &Bson) {
        if *id == Bson::Null {
            return;
        }
        let i = match self.by_source.iter().position(|e| e.0 == copy.source) {
            Some(i) => i,
            None => {
                self.by_source
                    .push((copy.source, Vec::new(), Vec::new(), HashSet::new()));
                self.by_source.len() - 1
            }
        };
        let entry = &mut self.by_source[i];
        if !entry.1.contains(&copy) {
            entry.1.push(copy);
        }
        if entry.3.insert(IdKey::of(id)) {
            entry.2.push(id.clone());
        }
    }

    /// One `find` per source collection, projecting the copied fields; returns the sources by
    /// collection and id, and what to settle after the write. With a session (a transaction),
    /// one `update` per source collection before it, claiming the sources (see `claim`).
    pub(super) async fn fetch(
        self,
        odm: &Odm,
        mut session: Option<&mut ClientSession>,
    ) -> Result<(Sources, Taken)> {
        let mut sources = Sources::new();
        let mut taken = Taken::default();
        for (source, copies, ids, _) in self.by_source {
            let copies: Vec<CopyInfo> = copies.into_iter().cloned().collect();
            // In a transaction the sources read must be written too, or a concurrent delete of
            // one would not conflict with this write (see `claim`). The driver does not say
            // whether a session is in a transaction: every session is taken for one.
            if let Some(s) = session.as_deref_mut() {
                super::claim::claim(odm, source, &ids, s).await?;
            }
            let found =
                super::cascade::read_values(odm, source, &ids, &copies, session.as_deref_mut())
                    .await?;
            sources.insert(
                source,
                found
                    .iter()
                    .filter_map(|d| Some((IdKey::of(d.get("_id")?), d.clone())))
                    .collect(),
            );
            taken.sources.push((source, copies, found));
        }
        Ok((sources, taken))
    }
}

/// Fetched sources, by collection and id.
pub(super) type Sources = HashMap<&'static str, HashMap<IdKey, Document>>;

/// Fills every copy held by `docs` (documents about to be inserted into, or to replace
/// documents of, `dependent`) from its source: one `find` per source collection for all the
/// documents, projecting only the copied fields. A copy whose source does not exist is an
/// error naming the document and the id. `key` is the shard key of `dependent`, if sharded.
pub(crate) async fn fill_copies(
    odm: &Odm,
    copies: &[CopyInfo],
    key: Option<crate::catalog::ShardKey>,
    docs: &mut [Document],
    session: Option<&mut ClientSession>,
) -> Result<Taken> {
    let copies: Vec<&CopyInfo> = copies
        .iter()
        .filter(|c| !matches!(c.kind, CopyKind::Latest { .. }))
        .collect();
    let mut wanted = Wanted::default();
    for copy in &copies {
        for doc in docs.iter().filter(|d| copy.applies_to(d)) {
            for id in source_ids(doc, copy) {
                wanted.add(copy, &id);
            }
        }
    }
    let dependent = copies.first().map_or("", |c| c.dependent);
    let (sources, mut taken) =
        crate::trace::step!("fill", dependent, wanted.fetch(odm, session)).await?;
    // Known by id, the documents written are the only ones their settling corrects.
    if docs.iter().all(|d| d.contains_key("_id")) {
        taken.wrote(docs, &crate::catalog::KeyCarrier::new(key));
    }
    for doc in docs.iter_mut() {
        for copy in &copies {
            if copy.applies_to(doc) {
                fill_one(doc, copy, sources.get(copy.source))?;
            }
        }
    }
    Ok(taken)
}

fn fill_one(
    doc: &mut Document,
    copy: &CopyInfo,
    sources: Option<&HashMap<IdKey, Document>>,
) -> Result<()> {
    let missing = |doc: &Document, id: &Bson| Error::DanglingReference {
        collection: copy.dependent.to_owned(),
        id: crate::error::show_id(doc.get("_id")),
        path: copy.path.clone(),
        target: copy.source.to_owned(),
        missing: id.to_string(),
    };
    let lookup = |id: &Bson| {
        sources
            .and_then(|s| s.get(&IdKey::of(id)))
            .filter(|source| copy.is_source(source))
    };
    match &copy.kind {
        CopyKind::Summary {
            array: true, id, ..
        } => {
            let snapshot = doc.clone();
            if let Some(Bson::Array(items)) = doc.get_mut(&copy.path) {
                for item in items.iter_mut() {
                    let Some(summary) = item.as_document_mut() else {
                        continue;
                    };
                    let Some(sid) = summary.get(id).cloned() else {
                        continue;
                    };
                    let source = lookup(&sid).ok_or_else(|| missing(&snapshot, &sid))?;
                    for (to, v) in copy.values_of(source)? {
                        summary.insert(to, v);
                    }
                }
            }
        }
        CopyKind::Summary {
            array: false, id, ..
        } => {
            let snapshot = doc.clone();
            if let Ok(summary) = doc.get_document_mut(&copy.path) {
                if let Some(sid) = summary.get(id).cloned() {
                    let source = lookup(&sid).ok_or_else(|| missing(&snapshot, &sid))?;
                    for (to, v) in copy.values_of(source)? {
                        summary.insert(to, v);
                    }
                }
            }
        }
        CopyKind::Flat { via } => {
            if let Some(sid) = get_path(doc, via).filter(|b| **b != Bson::Null).cloned() {
                let source = lookup(&sid).ok_or_else(|| missing(doc, &sid))?;
                if let Some((_, v)) = copy.values_of(source)?.into_iter().next() {
                    doc.insert(copy.path.clone(), v);
                }
            }
        }
        CopyKind::Latest { .. } => {}
    }
    Ok(())
}
