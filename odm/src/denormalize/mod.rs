//! Denormalization: copies of another model's fields, kept up to date by the ODM.
//!
//! Each `#[denormalize]` field registers a [`CopyInfo`] (through the model registry, so a copy
//! in a model the updating code never names is still found). The runtime then
//!
//! - fills the copies when a document carrying them is inserted or replaced (one `find` per
//!   source collection for all the documents, projecting only the copied fields), and when an
//!   update writes whole summaries or the reference a copy follows; then re-reads the sources
//!   once the write has landed, so that a concurrent rename cannot slip between the two;
//! - refuses typed updates that write inside a copy ([`Error::CopyWrite`](crate::Error));
//! - cascades an update of a copied source field to every copy (one `update_many` per
//!   dependent copy, with array filters for arrays of summaries), inside a transaction when the
//!   deployment has them, retried on write conflicts, so that concurrent updates never leave a
//!   copy different from its source;
//! - follows copies of copies: a copy the cascade (or a refill through a reference) writes is
//!   cascaded in turn to the copies taking from it, to any depth, in the same transaction when
//!   there is one (per level one `find` of the documents written, then the first level's
//!   updates; a latest-N array updated in place); copies forming a cycle are refused with
//!   [`Error::CopyCycle`](crate::Error) before anything is written;
//! - pushes a summary of each inserted source onto its parent for `latest = N`
//!   (`$push` with `$each`, `$sort`, `$slice: -N`);
//! - describes all of it as a printable [`CascadePlan`].

mod audit;
mod cascade;
mod fill;
mod latest;
mod plan;
mod transitive;
mod update;
mod verify;

pub use audit::{audit, reset_audit, AuditReport, AuditRow};
pub(crate) use audit::{record_reads, record_write};
pub use verify::{CopyIssue, CopyReport, VerifyCopies};

pub(crate) use cascade::{cascade_source_write, cascade_update, replace_source};
pub(crate) use fill::{fill_copies, push_latest, Taken};
pub(crate) use latest::{parents_of, refresh as refresh_latest, LatestRefresh};
pub use plan::{cascade_plan, CascadePlan, CascadeStep};
pub use transitive::check_copies;
pub(crate) use update::fill_update;

use bson::{Bson, Document};

use crate::model::registered_models;

/// What kind of copy a `#[denormalize]` field is.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CopyKind {
    /// A summary of one source (`author: AuthorSummary`) or an array of them
    /// (`parts: Vec<PartSummary>`), each holding the source's id in its field `id`.
    Summary {
        /// Whether the field is an array of summaries.
        array: bool,
        /// Stored name of the summary's id field.
        id: String,
        /// Whether a single summary is an `Option`: deleting its source then clears it;
        /// otherwise the delete is refused while a document holds a summary of it.
        optional: bool,
    },
    /// One field of the source, copied through the reference `via` on the dependent
    /// (`product_name` through `product`).
    Flat {
        /// Stored path of the reference on the dependent.
        via: String,
    },
    /// The last `n` sources of a parent, by `sort`, copied onto the parent through the
    /// source's reference `via` (`Host.logmsgs` through `LogMsg.host`).
    Latest {
        /// Stored path of the reference on the source.
        via: String,
        /// How many to keep.
        n: u32,
        /// The sort that defines the last ones, as a sort document (`{time: 1}`).
        sort: Document,
    },
}

/// One `#[denormalize]` field, as registered by the derive.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CopyInfo {
    /// The model holding the copy.
    pub dependent_type: &'static str,
    /// Its collection.
    pub dependent: &'static str,
    /// The stored path of the copy field.
    pub path: String,
    /// The source collection.
    pub source: &'static str,
    /// The kind of copy.
    pub kind: CopyKind,
    /// `(source path, path inside the copy)` for each copied field; for a flat copy the path
    /// inside the copy is empty (the copy field is the value).
    pub fields: Vec<(String, String)>,
}

impl CopyInfo {
    /// Used by the generated code.
    #[doc(hidden)]
    pub fn new(
        dependent_type: &'static str,
        dependent: &'static str,
        path: impl Into<String>,
        source: &'static str,
        kind: CopyKind,
        fields: Vec<(String, String)>,
    ) -> Self {
        CopyInfo {
            dependent_type,
            dependent,
            path: path.into(),
            source,
            kind,
            fields,
        }
    }

    /// The filter that finds the dependents copying from the sources `ids`.
    pub(crate) fn dependents_of(&self, ids: &[bson::Bson]) -> Document {
        let key = match &self.kind {
            CopyKind::Summary { id, .. } => format!("{}.{id}", self.path),
            CopyKind::Flat { via } => via.clone(),
            CopyKind::Latest { .. } => format!("{}._id", self.path),
        };
        crate::literal::is_in(&key, ids.to_vec())
    }

    /// Whether an update writing `path` changes a copied source field.
    pub(crate) fn is_touched_by(&self, path: &str) -> bool {
        self.fields.iter().any(|(source, _)| {
            source == path
                || source.starts_with(&format!("{path}."))
                || path.starts_with(&format!("{source}."))
        })
    }
}

/// The value at a dotted path of a document (`Null` when missing).
pub(crate) fn value_at(doc: &Document, path: &str) -> bson::Bson {
    let mut parts = path.split('.');
    let mut current = parts.next().and_then(|p| doc.get(p));
    for part in parts {
        current = current
            .and_then(|c| c.as_document())
            .and_then(|d| d.get(part));
    }
    current.cloned().unwrap_or(bson::Bson::Null)
}

/// Used by the generated code: the path of a copied field inside a summary, from the
/// summary field's path and the full path of the field below it.
#[doc(hidden)]
pub fn sub_path(field: &str, full: &str) -> String {
    full.strip_prefix(field)
        .and_then(|rest| rest.strip_prefix('.'))
        .unwrap_or(full)
        .to_owned()
}

/// The copies taken from `source` (not the latest-N summaries) that `update` (as sent, with
/// the copies it refills) writes.
pub(crate) fn touched_by(source: &str, update: &Document) -> Vec<CopyInfo> {
    let paths = written_by(update);
    copies_from(source)
        .into_iter()
        .filter(|c| !matches!(c.kind, CopyKind::Latest { .. }))
        .filter(|c| paths.iter().any(|p| c.is_touched_by(p)))
        .collect()
}

/// The paths an update document writes, under every operator.
pub(crate) fn written_by(update: &Document) -> Vec<&str> {
    update
        .values()
        .filter_map(Bson::as_document)
        .flat_map(|d| d.keys().map(String::as_str))
        .collect()
}

/// Every registered copy, computed once: the registry does not change while the program runs.
pub fn all_copies() -> &'static [CopyInfo] {
    static ALL: std::sync::OnceLock<Vec<CopyInfo>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        registered_models()
            .into_iter()
            .flat_map(|m| (m.copies)())
            .collect()
    })
}

/// Every copy taken from `source`.
pub fn copies_from(source: &str) -> Vec<CopyInfo> {
    all_copies()
        .iter()
        .filter(|c| c.source == source)
        .cloned()
        .collect()
}

/// Every copy held by documents of `dependent`.
pub fn copies_into(dependent: &str) -> Vec<CopyInfo> {
    all_copies()
        .iter()
        .filter(|c| c.dependent == dependent)
        .cloned()
        .collect()
}
