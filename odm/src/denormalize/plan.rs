//! The cascade plan: what a change of each source field triggers.

use std::fmt;

use super::{copies_from, CopyInfo, CopyKind};
use crate::model::Model;

/// What changing one source field does to one copy.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CascadeStep {
    /// The source field (stored path).
    pub field: String,
    /// The collection holding the copy.
    pub collection: &'static str,
    /// The model holding it.
    pub model: &'static str,
    /// The filter that finds the copies (with `<ids>` for the updated sources).
    pub filter: String,
    /// The update that rewrites them.
    pub update: String,
    /// The index that serves the filter.
    pub index: String,
    /// The commands it adds to an update of one source.
    pub commands: usize,
}

/// The cascade plan of a source model; printable. See [`cascade_plan`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CascadePlan {
    /// The source collection.
    pub source: &'static str,
    /// One step per (copied field, copy).
    pub steps: Vec<CascadeStep>,
    /// Copies of sources onto their parents (`latest = N`), done on insert.
    pub on_insert: Vec<CopyInfo>,
}

/// For each copied field of `T`: which collections hold copies, the filter and update that
/// keep them equal to the source, the index that serves the filter, and how many commands an
/// update of one source adds (one `update` per copy; the source update itself becomes one
/// `findAndModify` so that the new values are known, plus `commitTransaction` when the
/// deployment has transactions).
pub fn cascade_plan<T: Model>() -> CascadePlan {
    let mut steps = Vec::new();
    let mut on_insert = Vec::new();
    for copy in copies_from(T::COLLECTION) {
        if matches!(copy.kind, CopyKind::Latest { .. }) {
            on_insert.push(copy);
            continue;
        }
        for (from, to) in &copy.fields {
            let (filter, update, index) = match &copy.kind {
                CopyKind::Summary { array: true, id, .. } => (
                    format!("{{ {}.{id}: {{ $in: <ids> }} }}", copy.path),
                    format!(
                        "{{ $set: {{ \"{}.$[copy].{to}\": <new {from}> }} }}, arrayFilters [{{ \"copy.{id}\": {{ $in: <ids> }} }}]",
                        copy.path
                    ),
                    format!("{}.{id}_1", copy.path),
                ),
                CopyKind::Summary { array: false, id, .. } => (
                    format!("{{ {}.{id}: {{ $in: <ids> }} }}", copy.path),
                    format!("{{ $set: {{ \"{}.{to}\": <new {from}> }} }}", copy.path),
                    format!("{}.{id}_1", copy.path),
                ),
                CopyKind::Flat { via } => (
                    format!("{{ {via}: {{ $in: <ids> }} }}"),
                    format!("{{ $set: {{ {}: <new {from}> }} }}", copy.path),
                    format!("the index on `{via}` (a reference's own)"),
                ),
                CopyKind::Latest { .. } => continue,
            };
            steps.push(CascadeStep {
                field: from.clone(),
                collection: copy.dependent,
                model: copy.dependent_type,
                filter,
                update,
                index,
                commands: 1,
            });
        }
    }
    steps.sort_by(|a, b| (&a.field, a.collection).cmp(&(&b.field, b.collection)));
    CascadePlan {
        source: T::COLLECTION,
        steps,
        on_insert,
    }
}

impl fmt::Display for CascadePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cascade plan of `{}`:", self.source)?;
        if self.steps.is_empty() && self.on_insert.is_empty() {
            writeln!(f, "  nothing is copied from `{}`", self.source)?;
        }
        let mut last = None;
        for step in &self.steps {
            if last != Some(&step.field) {
                writeln!(
                    f,
                    "  when `{}` changes (the update becomes a findAndModify):",
                    step.field
                )?;
                last = Some(&step.field);
            }
            writeln!(f, "    update_many {} ({})", step.collection, step.model)?;
            writeln!(f, "      filter  {}", step.filter)?;
            writeln!(f, "      update  {}", step.update)?;
            writeln!(f, "      index   {}", step.index)?;
        }
        for copy in &self.on_insert {
            if let CopyKind::Latest { via, n, sort } = &copy.kind {
                writeln!(
                    f,
                    "  on insert: push a summary onto {}.{} through `{via}` ($each, $sort {sort}, $slice -{n}): one update per parent",
                    copy.dependent, copy.path
                )?;
                let fields: Vec<&str> = copy.fields.iter().map(|(from, _)| from.as_str()).collect();
                writeln!(
                    f,
                    "  on delete, or when `{via}` or `{}` changes: 1 find of the parents before, then recompute their {}.{} (1 aggregate with $topN + 1 update per parent, in a transaction when the deployment has them)",
                    fields.join("`, `"),
                    copy.dependent,
                    copy.path
                )?;
            }
        }
        if !self.steps.is_empty() {
            writeln!(
                f,
                "  commands for an update of one source touching every copied field: 1 findAndModify + {} update(s), then 1 find re-reading the source (by default), or + commitTransaction (in a transaction)",
                self.steps.len()
            )?;
        }
        Ok(())
    }
}
