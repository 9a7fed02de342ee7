//! The eventual-consistency sweep the seeds recommend ("a background or nightly process"):
//! find every copy that differs from its source, and repair it.

use std::collections::HashMap;
use std::fmt;

use bson::{doc, Bson, Document};
use mongodb::options::{FindOptions, UpdateOptions};

use super::{CopyInfo, CopyKind};
use crate::document::value_at;
use crate::document::IdKey;
use crate::engine::find_documents;
use crate::engine::{Effect, Own};
use crate::{Odm, Result};

/// One copy that differs from its source.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CopyIssue {
    /// The collection holding the copy.
    pub collection: &'static str,
    /// The document holding it.
    pub id: Bson,
    /// The copy's path (`parts.name`, `product_name`).
    pub path: String,
    /// The source document.
    pub source: Bson,
    /// The source's value (`Null` when the source no longer exists).
    pub expected: Bson,
    /// The copy's value.
    pub found: Bson,
    /// Whether the source no longer exists (the copy outlived it).
    pub source_missing: bool,
}

/// A document a sweep could not check or repair, and why. The sweep went on with the others.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BadDocument {
    /// Its collection.
    pub collection: &'static str,
    /// Its `_id`.
    pub id: Bson,
    /// The field at fault: the copy of the wrong shape, or the source field a copy cannot hold
    /// (`parts`, `name`).
    pub path: String,
    /// Why: the field of the wrong shape, the value a copy cannot hold, what the server said.
    pub reason: String,
}

impl fmt::Display for BadDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.collection,
            crate::error::show_id(Some(&self.id)),
            self.reason
        )
    }
}

/// The outcome of [`Odm::verify_copies`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CopyReport {
    /// Documents read, over every copy.
    pub documents_checked: u64,
    /// Copies that differ from their source.
    pub issues: Vec<CopyIssue>,
    /// Update commands sent to repair them (0 unless repairing).
    pub repairs: u64,
    /// Documents that could not be checked or repaired (a copy field of the wrong shape, a
    /// source value the copy's type cannot decode, a repair the server refused), each with the
    /// reason. Nothing malformed was written.
    pub bad_documents: Vec<BadDocument>,
    /// The two-way references swept, as `children.link <-> parents.inverse`, with their
    /// reports.
    pub two_way: Vec<(String, super::InverseReport)>,
}

impl CopyReport {
    /// True when every copy equals its source and both sides of every two-way reference agree.
    pub fn is_consistent(&self) -> bool {
        self.issues.is_empty()
            && self.bad_documents.is_empty()
            && self.two_way.iter().all(|(_, r)| r.is_consistent())
    }
}

impl fmt::Display for CopyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} documents checked, {} copies differ from their source, {} repair updates",
            self.documents_checked,
            self.issues.len(),
            self.repairs
        )?;
        for i in &self.issues {
            if i.source_missing {
                writeln!(
                    f,
                    "  {} {} {}: {} (source {} no longer exists)",
                    i.collection, i.id, i.path, i.found, i.source
                )?;
            } else {
                writeln!(
                    f,
                    "  {} {} {}: {} (source {} has {})",
                    i.collection, i.id, i.path, i.found, i.source, i.expected
                )?;
            }
        }
        for bad in &self.bad_documents {
            writeln!(f, "  not checked or repaired: {bad}")?;
        }
        for (pair, r) in &self.two_way {
            write!(f, "two-way {pair}: {r}")?;
        }
        Ok(())
    }
}

/// Builder returned by [`Odm::verify_copies`]; `.await` it.
///
/// For each registered copy, reads the documents holding it in `_id` order, `batch_size` at a
/// time (default 500; memory holds one batch), with one `find` plus `getMore`s, and per batch
/// one `find` of the sources by `_id` (`$in`, projecting the copied fields; one per
/// [chunk](crate::batch) of source ids when the batch references more), or for a latest-N
/// array one `aggregate` computing what the batch's arrays should hold. With `.repair(true)`,
/// one `update` per wrong copy sets it to the source's value (a summary of a deleted source is
/// pulled, an optional single summary of one is set to `null`, a required one is only reported;
/// a latest-N array is set to what it should hold). A copy of a copy is compared with the copy
/// it takes from, swept after it, so that one repairing sweep leaves every level equal to the
/// level above; copies forming a cycle are refused ([`Error::CopyCycle`](crate::Error::CopyCycle)).
#[must_use = "the sweep runs when awaited"]
#[derive(Debug)]
pub struct VerifyCopies<'a> {
    odm: &'a Odm,
    only: Option<&'static str>,
    batch_size: usize,
    repair: bool,
}

impl<'a> VerifyCopies<'a> {
    pub(crate) fn new(odm: &'a Odm) -> Self {
        VerifyCopies {
            odm,
            only: None,
            batch_size: 500,
            repair: false,
        }
    }

    /// Only the copies held by the model `T`.
    pub fn of<T: crate::Model>(mut self) -> Self {
        self.only = Some(T::COLLECTION);
        self
    }

    /// Also fixes what it finds.
    pub fn repair(mut self, yes: bool) -> Self {
        self.repair = yes;
        self
    }

    /// Documents per batch.
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    async fn run(self) -> Result<CopyReport> {
        let mut report = CopyReport::default();
        // Copies of copies after the copies they take from: each is compared with a source
        // already repaired.
        for copy in super::graph::in_cascade_order(self.odm.catalog())? {
            if self.only.is_some_and(|o| o != copy.dependent) {
                continue;
            }
            match copy.kind {
                CopyKind::Latest { .. } => self.sweep_latest(copy, &mut report).await?,
                _ => self.sweep(copy, &mut report).await?,
            }
        }
        for (child, link, parent, inverse) in two_way_pairs(self.odm.catalog()) {
            if self.only.is_some_and(|o| o != child && o != parent) {
                continue;
            }
            let r = super::Sweep {
                odm: self.odm,
                child,
                link: link.clone(),
                parent,
                inverse: inverse.clone(),
                batch_size: self.batch_size,
                repair: self.repair,
            }
            .run()
            .await?;
            report.repairs += r.parents_repaired;
            report
                .two_way
                .push((format!("{child}.{link} <-> {parent}.{inverse}"), r));
        }
        Ok(report)
    }

    /// A latest-N array: per batch of parents, one `aggregate` computing what their arrays
    /// should hold, compared with what they hold.
    async fn sweep_latest(&self, copy: &CopyInfo, report: &mut CopyReport) -> Result<()> {
        let CopyKind::Latest { n, .. } = &copy.kind else {
            return Ok(());
        };
        let projection = doc! { "_id": 1, copy.path.as_str(): 1 };
        let mut batches = self.holders(copy, projection).await?;
        while let Some(batch) = batches.next().await? {
            report.documents_checked += batch.len() as u64;
            let held: HashMap<IdKey, Vec<Bson>> = batch
                .iter()
                .filter_map(|d| {
                    let array = d.get_array(&copy.path).cloned().unwrap_or_default();
                    Some((IdKey::of(d.get("_id")?), array))
                })
                .collect();
            let parents: Vec<Bson> = batch.iter().filter_map(|d| d.get("_id").cloned()).collect();
            let expected = super::latest::expected(self.odm, copy, &parents, None).await?;
            for (parent, want) in expected {
                let found = held.get(&IdKey::of(&parent)).cloned().unwrap_or_default();
                if found == want {
                    continue;
                }
                report.issues.push(CopyIssue {
                    collection: copy.dependent,
                    id: parent.clone(),
                    path: copy.path.clone(),
                    source: Bson::String(format!("the latest {n} of `{}`", copy.source)),
                    expected: Bson::Array(want.clone()),
                    found: Bson::Array(found),
                    source_missing: false,
                });
                if self.repair {
                    let by_id = crate::literal::eq("_id", parent.clone());
                    let set = doc! { "$set": { copy.path.as_str(): want } };
                    let write =
                        Own::update(copy.dependent, by_id, set, Effect::Derived, "copy repair")
                            .one()
                            .showing(crate::error::show_id(Some(&parent)));
                    self.odm.write_own(write, None).await?;
                    report.repairs += 1;
                }
            }
        }
        Ok(())
    }

    /// The documents holding `copy`, in batches: those of its kind when a kind keeps it.
    async fn holders(
        &self,
        copy: &CopyInfo,
        projection: Document,
    ) -> Result<crate::sweep::Batches<'static>> {
        let filter = copy.dependent_kind.map(|k| k.filter()).unwrap_or_default();
        let what = match copy.kind {
            CopyKind::Latest { .. } => "latest",
            _ => "copies",
        };
        let work = crate::sweep::Work::of(self.repair, || {
            format!("{what} {}.{}", copy.dependent, copy.path)
        });
        crate::sweep::Batches::matching(
            self.odm,
            copy.dependent,
            filter,
            projection,
            self.batch_size,
            work,
        )
        .await
    }

    async fn sweep(&self, copy: &CopyInfo, report: &mut CopyReport) -> Result<()> {
        let mut projection = doc! { "_id": 1, copy.path.as_str(): 1 };
        if let CopyKind::Flat { via } = &copy.kind {
            projection.insert(via.as_str(), 1);
        }
        let mut batches = self.holders(copy, projection).await?;
        while let Some(batch) = batches.next().await? {
            self.check_batch(copy, batch, report).await?;
        }
        Ok(())
    }

    async fn check_batch(
        &self,
        copy: &CopyInfo,
        docs: Vec<Document>,
        report: &mut CopyReport,
    ) -> Result<()> {
        report.documents_checked += docs.len() as u64;
        let slots = slots_of(copy, &docs, report);
        if slots.is_empty() {
            return Ok(());
        }
        let mut source_ids: Vec<Bson> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (_, s, _) in &slots {
            if seen.insert(IdKey::of(s)) {
                source_ids.push(s.clone());
            }
        }
        let mut projection = doc! { "_id": 1 };
        for (from, _) in &copy.fields {
            projection.insert(from.as_str(), 1);
        }
        let mut sources: HashMap<IdKey, Document> = HashMap::new();
        for chunk in crate::batch::chunks(source_ids) {
            let options = FindOptions::builder()
                .projection(projection.clone())
                .build();
            let filter = crate::literal::is_in("_id", chunk);
            // A document of another kind under the id is no source: the copy is dangling.
            let filter = match copy.source_kind {
                Some(kind) => kind.restrict(filter),
                None => filter,
            };
            sources.extend(
                find_documents(self.odm, copy.source, filter, options, None)
                    .await?
                    .into_iter()
                    .filter_map(|d| Some((IdKey::of(d.get("_id")?), d))),
            );
        }
        for (doc_id, source_id, slot) in slots {
            let source = sources.get(&IdKey::of(&source_id));
            let mut wrong: Vec<(String, Bson)> = Vec::new();
            let mut malformed = false;
            for (from, to) in &copy.fields {
                let expected = source.map_or(Bson::Null, |s| value_at(s, from));
                if let Some(Err(e)) = source.map(|s| copy.check_value(s, from, &expected)) {
                    // Reported once per source and field, never copied.
                    let bad = BadDocument {
                        collection: copy.source,
                        id: source_id.clone(),
                        path: from.clone(),
                        reason: e.to_string(),
                    };
                    if !report.bad_documents.contains(&bad) {
                        report.bad_documents.push(bad);
                    }
                    malformed = true;
                }
                let found = slot.get(to.as_str()).cloned().unwrap_or(Bson::Null);
                if expected != found {
                    let path = if to.is_empty() {
                        copy.path.clone()
                    } else {
                        format!("{}.{to}", copy.path)
                    };
                    report.issues.push(CopyIssue {
                        collection: copy.dependent,
                        id: doc_id.clone(),
                        path,
                        source: source_id.clone(),
                        expected: expected.clone(),
                        found,
                        source_missing: source.is_none(),
                    });
                    wrong.push((to.clone(), expected));
                }
            }
            if !self.repair || wrong.is_empty() || malformed {
                continue;
            }
            match self
                .fix(copy, &doc_id, &source_id, source.is_some(), wrong)
                .await
            {
                Ok(true) => report.repairs += 1,
                Ok(false) => {}
                // The server refused this repair (the document would pass 16 MB, ...): the
                // sweep goes on with the others.
                Err(e) => report.bad_documents.push(BadDocument {
                    collection: copy.dependent,
                    id: doc_id.clone(),
                    path: copy.path.clone(),
                    reason: format!("repair of `{}` refused: {e}", copy.path),
                }),
            }
        }
        Ok(())
    }

    async fn fix(
        &self,
        copy: &CopyInfo,
        doc_id: &Bson,
        source_id: &Bson,
        source_exists: bool,
        wrong: Vec<(String, Bson)>,
    ) -> Result<bool> {
        let (update, options) = match &copy.kind {
            CopyKind::Summary {
                array: true, id, ..
            } if !source_exists => (
                doc! { "$pull": { copy.path.as_str(): crate::literal::eq(id, source_id.clone()) } },
                UpdateOptions::default(),
            ),
            CopyKind::Summary {
                array: true, id, ..
            } => {
                let mut set = Document::new();
                for (to, v) in wrong {
                    set.insert(format!("{}.$[copy].{to}", copy.path), v);
                }
                let options = UpdateOptions::builder()
                    .array_filters(vec![crate::literal::eq(
                        &format!("copy.{id}"),
                        source_id.clone(),
                    )])
                    .build();
                (doc! { "$set": set }, options)
            }
            CopyKind::Summary {
                array: false,
                optional,
                ..
            } if !source_exists => {
                if !optional {
                    // A required summary of a deleted source: only the application can decide
                    // what the document should hold instead. Reported, not repaired.
                    return Ok(false);
                }
                (
                    doc! { "$set": { copy.path.as_str(): Bson::Null } },
                    UpdateOptions::default(),
                )
            }
            CopyKind::Summary { array: false, .. } => {
                let mut set = Document::new();
                for (to, v) in wrong {
                    set.insert(format!("{}.{to}", copy.path), v);
                }
                (doc! { "$set": set }, UpdateOptions::default())
            }
            // A copy of a deleted source is removed, as the `nullify` delete rule removes it:
            // the copy has the source field's type, which may not hold null.
            CopyKind::Flat { .. } if !source_exists => (
                doc! { "$unset": { copy.path.as_str(): "" } },
                UpdateOptions::default(),
            ),
            CopyKind::Flat { .. } => {
                let v = wrong.into_iter().next().map_or(Bson::Null, |(_, v)| v);
                (
                    doc! { "$set": { copy.path.as_str(): v } },
                    UpdateOptions::default(),
                )
            }
            CopyKind::Latest { .. } => return Ok(false),
        };
        let by_id = crate::literal::eq("_id", doc_id.clone());
        let mut write = Own::update(
            copy.dependent,
            by_id,
            update,
            Effect::Derived,
            "copy repair",
        )
        .one()
        .showing(crate::error::show_id(Some(doc_id)));
        if let Some(array_filters) = options.array_filters {
            write = write.array_filters(array_filters);
        }
        self.odm.write_own(write, None).await?;
        Ok(true)
    }
}

/// A copy field that does not have the shape of its kind.
fn wrong_shape(copy: &CopyInfo, id: &Bson, want: &str, found: &Bson) -> BadDocument {
    BadDocument {
        collection: copy.dependent,
        id: id.clone(),
        path: copy.path.clone(),
        reason: format!(
            "`{}` should hold {want}, but holds {found}; not checked",
            copy.path
        ),
    }
}

/// Every registered two-way reference as `(child collection, link path, parent collection,
/// inverse path)`, each once, whichever side declared it.
fn two_way_pairs(
    catalog: &crate::catalog::Catalog,
) -> Vec<(&'static str, String, &'static str, String)> {
    let mut pairs = Vec::new();
    for m in catalog.models() {
        for r in (m.references)() {
            let Some(inverse) = r.inverse.clone() else {
                continue;
            };
            let pair = if r.kind == crate::catalog::RefKind::Many {
                (r.to, inverse, r.from, r.path.clone())
            } else {
                (r.from, r.path.clone(), r.to, inverse)
            };
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    pairs
}

impl<'a> std::future::IntoFuture for VerifyCopies<'a> {
    type Output = Result<CopyReport>;
    type IntoFuture = crate::engine::BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("verify_copies", "*");
        crate::trace::boxed(span, self.run(), |r: &CopyReport| Some(r.documents_checked))
    }
}

/// (document id, source id, slot) for every copy held by `docs`; a copy of the wrong shape is
/// reported as a bad document.
fn slots_of(
    copy: &CopyInfo,
    docs: &[Document],
    report: &mut CopyReport,
) -> Vec<(Bson, Bson, Document)> {
    let mut slots: Vec<(Bson, Bson, Document)> = Vec::new();
    for d in docs {
        let Some(id) = d.get("_id").cloned() else {
            continue;
        };
        match &copy.kind {
            CopyKind::Summary {
                array: true,
                id: sid,
                ..
            } => match d.get(&copy.path) {
                Some(Bson::Array(items)) => {
                    for item in items {
                        match item.as_document() {
                            Some(item) => {
                                if let Some(s) = item.get(sid) {
                                    slots.push((id.clone(), s.clone(), item.clone()));
                                }
                            }
                            None => report.bad_documents.push(wrong_shape(
                                copy,
                                &id,
                                "an array of summaries",
                                item,
                            )),
                        }
                    }
                }
                None | Some(Bson::Null) => {}
                Some(other) => report.bad_documents.push(wrong_shape(
                    copy,
                    &id,
                    "an array of summaries",
                    other,
                )),
            },
            CopyKind::Summary {
                array: false,
                id: sid,
                ..
            } => match d.get(&copy.path) {
                Some(Bson::Document(item)) => {
                    if let Some(s) = item.get(sid) {
                        slots.push((id.clone(), s.clone(), item.clone()));
                    }
                }
                None | Some(Bson::Null) => {}
                Some(other) => report.bad_documents.push(wrong_shape(
                    copy,
                    &id,
                    "a summary (a document)",
                    other,
                )),
            },
            CopyKind::Flat { via } => {
                if let Some(s) = d.get(via).filter(|b| **b != Bson::Null) {
                    let mut slot = Document::new();
                    slot.insert("", d.get(&copy.path).cloned().unwrap_or(Bson::Null));
                    slots.push((id.clone(), s.clone(), slot));
                }
            }
            CopyKind::Latest { .. } => {}
        }
    }
    slots
}
