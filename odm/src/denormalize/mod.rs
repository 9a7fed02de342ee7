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
pub(crate) mod background;
mod cascade;
mod claim;
mod fill;
mod follow;
mod follows;
mod graph;
pub(crate) mod inverse;
mod latest;
mod maintain;
mod plan;
mod settle;
mod source_write;
mod transitive;
mod update;
mod values;
mod verify;

pub use audit::{audit, reset_audit, AuditReport, AuditRow};
pub(crate) use audit::{record_reads, record_write};
pub use background::{CascadeStatus, CascadeWorker, WorkerReport, INTENTS};
pub(crate) use inverse::{InverseReport, Sweep};
pub use verify::{BadDocument, CopyIssue, CopyReport, VerifyCopies};

pub(crate) use fill::fill_copies;
pub(crate) use follow::{cascade_sources, refresh_latest_of, Unapplied};
pub(crate) use follows::{CopiesFollow, LatestFollow};
pub use graph::{check_copies, check_copies_in};
pub(crate) use latest::{
    latest_touched, parents_of, push_latest, refresh as refresh_latest, LatestRefresh,
};
pub(crate) use maintain::{Cascade, Copies, LatestInTransaction};
pub use plan::{
    cascade_plan, cascade_plan_in, CascadeIntent, CascadePlan, CascadeStep, CascadeWalk, SentBy,
};
pub(crate) use settle::Taken;
pub(crate) use update::{fill_update, Writes};

use bson::{Bson, Document};

use crate::catalog::Catalog;
pub use crate::catalog::{sub_path, CopyInfo, CopyKind, ValueCheck};

/// What the runtime does with a copy's description.
impl CopyInfo {
    /// Refuses a value of the source field `from` that the copy's type cannot decode (a
    /// source written behind the ODM's back: `name: 17` where the copy is a `String`): the
    /// error names the source collection, the source's `_id` and the field, so that the
    /// malformed value is never written into a copy.
    pub(crate) fn check_value(
        &self,
        source: &Document,
        from: &str,
        value: &bson::Bson,
    ) -> crate::Result<()> {
        let Some(i) = self.fields.iter().position(|(f, _)| f == from) else {
            return Ok(());
        };
        match self.checks.get(i).map(|c| c.check(value)) {
            Some(Err(message)) => Err(crate::Error::Decode {
                collection: self.source.to_owned(),
                id: crate::error::show_id(source.get("_id")),
                path: from.to_owned(),
                message: format!(
                    "{message} (the value would be copied into `{}` of `{}`; nothing was copied)",
                    self.path, self.dependent
                ),
            }),
            _ => Ok(()),
        }
    }

    /// The values of the copied fields of `source`, `(path inside the copy, value)`, each
    /// checked against the copy's type.
    pub(crate) fn values_of(&self, source: &Document) -> crate::Result<Vec<(String, bson::Bson)>> {
        self.fields
            .iter()
            .map(|(from, to)| {
                let v = crate::document::value_at(source, from);
                self.check_value(source, from, &v)?;
                Ok((to.clone(), v))
            })
            .collect()
    }

    /// The dependents of the source `id` whose copy differs from `values` (as
    /// [`values_of`](Self::values_of) gives them): for an array of summaries, those holding
    /// a summary of the source with another value; else those following the source whose
    /// copy has another value. Every value is matched as a value (`$eq`).
    pub(crate) fn differs(&self, id: &bson::Bson, values: &[(String, bson::Bson)]) -> Document {
        let join = |prefix: &str, to: &str| match (prefix.is_empty(), to.is_empty()) {
            (true, _) => to.to_owned(),
            (_, true) => prefix.to_owned(),
            _ => format!("{prefix}.{to}"),
        };
        let differs = |prefix: &str| -> Vec<Document> {
            values
                .iter()
                .map(|(to, v)| bson::doc! { join(prefix, to): { "$not": { "$eq": v.clone() } } })
                .collect()
        };
        let which = match &self.kind {
            CopyKind::Summary {
                array: true,
                id: id_field,
                ..
            } => {
                let mut element = crate::literal::eq(id_field, id.clone());
                element.insert("$or", differs(""));
                bson::doc! { self.path.as_str(): { "$elemMatch": element } }
            }
            _ => bson::doc! { "$or": differs(&self.path) },
        };
        bson::doc! { "$and": [self.dependents_of(std::slice::from_ref(id)), which] }
    }

    /// The filter that finds the dependents copying from the sources `ids`.
    pub(crate) fn dependents_of(&self, ids: &[bson::Bson]) -> Document {
        let filter = crate::literal::is_in(&self.dependents_key(), ids.to_vec());
        match self.dependent_kind {
            Some(kind) => kind.restrict(filter),
            None => filter,
        }
    }
}

/// The copies taken from `source` (not the latest-N summaries) that `update` (as sent, with
/// the copies it refills) writes.
pub(crate) fn touched_by(
    catalog: &Catalog,
    source: &str,
    kind: Option<crate::kind::Kind>,
    update: &Document,
) -> Vec<CopyInfo> {
    touched_by_paths(catalog, source, kind, Some(&written_by(update)))
}

/// The copies taken from `source` (not the latest-N summaries), of a source of the kind `kind`
/// when given, that a write of `paths` touches (`None`: the whole document was written, every
/// copy).
pub(crate) fn touched_by_paths(
    catalog: &Catalog,
    source: &str,
    kind: Option<crate::kind::Kind>,
    paths: Option<&[&str]>,
) -> Vec<CopyInfo> {
    catalog
        .copies_from(source)
        .iter()
        // An update of one kind changes no copy taken from another kind.
        .filter(|c| match (kind, c.source_kind) {
            (Some(k), Some(from)) => k == from,
            _ => true,
        })
        .filter(|c| !matches!(c.kind, CopyKind::Latest { .. }))
        .filter(|c| paths.is_none_or(|paths| paths.iter().any(|p| c.is_touched_by(p))))
        .cloned()
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
