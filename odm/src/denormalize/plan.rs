//! The cascade plan: what a change of each source field triggers.

use std::fmt;

use super::{CopyInfo, CopyKind};
use crate::catalog::Catalog;
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
    /// 1 for a copy of the source field, 2 for a copy of that copy, and so on. A step below
    /// the first level is preceded by one `find` of the documents whose copy was written.
    pub level: usize,
    /// The field it copies, as `collection.path`: the source field at level 1, a copy above.
    pub copy_of: String,
    /// Where the update goes on a sharded cluster: routed when its filter names the
    /// dependent's shard key, scattered to every shard otherwise (see [`crate::shard`]).
    pub routing: crate::shard::RouteVerdict,
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
    /// The cycle the registered copies form, when they do: every cascade along it is refused
    /// ([`Error::CopyCycle`](crate::Error::CopyCycle)).
    pub cycle: Option<String>,
}

/// For each copied field of `T`: which collections hold copies, the filter and update that
/// keep them equal to the source, the index that serves the filter, and how many commands an
/// update of one source adds (one `update` per copy; the source update itself becomes one
/// `findAndModify` so that the new values are known, plus `commitTransaction` when the
/// deployment has transactions). Copies of those copies follow, level after level (one `find`
/// of the documents whose copy was written, then one `update` per copy of it), each step
/// marked with its [`level`](CascadeStep::level).
///
/// Among every linked model; [`cascade_plan_in`] for a handle's [`Catalog`].
pub fn cascade_plan<T: Model>() -> CascadePlan {
    cascade_plan_in::<T>(&Catalog::linked())
}

/// [`cascade_plan`] among the models of `catalog`.
pub fn cascade_plan_in<T: Model>(catalog: &Catalog) -> CascadePlan {
    let mut groups: Vec<((String, &'static str), Vec<CascadeStep>)> = Vec::new();
    let mut on_insert = Vec::new();
    for copy in catalog.copies_from(T::COLLECTION) {
        if matches!(copy.kind, CopyKind::Latest { .. }) {
            on_insert.push(copy.clone());
            continue;
        }
        for (from, to) in &copy.fields {
            let Some(mut step) = step(catalog, copy, from, to, "<ids>") else {
                continue;
            };
            step.field = from.clone();
            let mut group = vec![step];
            deeper(catalog, copy, from, 2, &mut group);
            groups.push(((from.clone(), copy.dependent), group));
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    CascadePlan {
        source: T::COLLECTION,
        steps: groups.into_iter().flat_map(|(_, g)| g).collect(),
        on_insert,
        cycle: super::graph::check_copies_in(catalog)
            .err()
            .map(|e| e.to_string()),
    }
}

/// The step that writes `copy` (its field `to`, from the source field `from`) in the
/// dependents of the sources `ids`.
fn step(
    catalog: &Catalog,
    copy: &CopyInfo,
    from: &str,
    to: &str,
    ids: &str,
) -> Option<CascadeStep> {
    let by = match &copy.kind {
        CopyKind::Summary { id, .. } => format!("{}.{id}", copy.path),
        CopyKind::Flat { via } => via.clone(),
        CopyKind::Latest { .. } => "_id".to_owned(),
    };
    let (filter, update, index) = match &copy.kind {
        CopyKind::Summary { array: true, id, .. } => (
            format!("{{ {}.{id}: {{ $in: {ids} }} }}", copy.path),
            format!(
                "{{ $set: {{ \"{}.$[copy].{to}\": <new {from}> }} }}, arrayFilters [{{ \"copy.{id}\": {{ $in: {ids} }} }}]",
                copy.path
            ),
            format!("{}.{id}_1", copy.path),
        ),
        CopyKind::Summary { array: false, id, .. } => (
            format!("{{ {}.{id}: {{ $in: {ids} }} }}", copy.path),
            format!("{{ $set: {{ \"{}.{to}\": <new {from}> }} }}", copy.path),
            format!("{}.{id}_1", copy.path),
        ),
        CopyKind::Flat { via } => (
            format!("{{ {via}: {{ $in: {ids} }} }}"),
            format!("{{ $set: {{ {}: <new {from}> }} }}", copy.path),
            format!("the index on `{via}` (a reference's own)"),
        ),
        CopyKind::Latest { .. } => return None,
    };
    // The copies of a kind are written on the documents of that kind only.
    let filter = match copy.dependent_kind {
        Some(k) => format!("{{ {}: \"{}\", {}", k.field, k.value, &filter[2..]),
        None => filter,
    };
    Some(CascadeStep {
        field: from.to_owned(),
        collection: copy.dependent,
        model: copy.dependent_type,
        filter,
        update,
        index,
        commands: 1,
        level: 1,
        copy_of: format!("{}.{}", copy.source, from),
        routing: crate::shard::verdict_in(catalog, copy.dependent, &[by.as_str()]),
    })
}

/// The copies of what `copy` writes, at `level`, and theirs below, appended to `steps`.
fn deeper(
    catalog: &Catalog,
    copy: &CopyInfo,
    root: &str,
    level: usize,
    steps: &mut Vec<CascadeStep>,
) {
    // A cycle would never end: the plan names it instead (see `CascadePlan::cycle`).
    if super::graph::check_copies_in(catalog).is_err() {
        return;
    }
    let written = super::graph::written_paths(copy);
    let ids = format!("<ids of the {} written>", copy.dependent);
    for next in super::graph::next_level(catalog, copy) {
        for (from, to) in &next.fields {
            if !written
                .iter()
                .any(|w| next.is_touched_by(w) && overlaps(from, w))
            {
                continue;
            }
            let mut step = match &next.kind {
                CopyKind::Latest { via, sort, .. } => {
                    let sorted = sort.keys().any(|k| overlaps(k, from));
                    CascadeStep {
                        field: root.to_owned(),
                        collection: next.dependent,
                        model: next.dependent_type,
                        filter: format!("{{ _id: {{ $in: <their `{via}`> }} }}"),
                        update: if sorted {
                            "recomputed: 1 aggregate with $topN + 1 update per parent (a sort key changed)".to_owned()
                        } else {
                            format!(
                                "{{ $set: {{ \"{}.$[copy].{to}\": <new {from}> }} }}, arrayFilters [{{ \"copy._id\": {{ $in: {ids} }} }}]",
                                next.path
                            )
                        },
                        index: "_id_".to_owned(),
                        commands: 1,
                        level: 1,
                        copy_of: String::new(),
                        routing: crate::shard::verdict_in(catalog, next.dependent, &["_id"]),
                    }
                }
                _ => match step(catalog, &next, from, to, &ids) {
                    Some(s) => s,
                    None => continue,
                },
            };
            step.field = root.to_owned();
            step.level = level;
            step.copy_of = format!("{}.{}", next.source, from);
            steps.push(step);
        }
        deeper(catalog, &next, root, level + 1, steps);
    }
}

fn overlaps(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

impl fmt::Display for CascadePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cascade plan of `{}`:", self.source)?;
        if self.steps.is_empty() && self.on_insert.is_empty() {
            writeln!(f, "  nothing is copied from `{}`", self.source)?;
        }
        let mut last = None;
        let mut above: Option<(usize, &str)> = None;
        for step in &self.steps {
            if last != Some(&step.field) {
                writeln!(
                    f,
                    "  when `{}` changes (the update becomes a findAndModify):",
                    step.field
                )?;
                last = Some(&step.field);
                above = None;
            }
            let indent = "  ".repeat(step.level.saturating_sub(1));
            if step.level > 1 && above != Some((step.level, step.copy_of.as_str())) {
                let (collection, _) = step.copy_of.split_once('.').unwrap_or((&step.copy_of, ""));
                writeln!(
                    f,
                    "    {indent}level {}: `{}` is copied in turn: find {collection} (the documents just written, projecting what is copied from them)",
                    step.level, step.copy_of
                )?;
            }
            above = Some((step.level, step.copy_of.as_str()));
            writeln!(
                f,
                "    {indent}update_many {} ({})",
                step.collection, step.model
            )?;
            writeln!(f, "    {indent}  filter  {}", step.filter)?;
            writeln!(f, "    {indent}  update  {}", step.update)?;
            writeln!(f, "    {indent}  index   {}", step.index)?;
            // Only for a sharded dependent: an unsharded one has one place to go.
            if step.routing != crate::shard::RouteVerdict::Unsharded {
                writeln!(
                    f,
                    "    {indent}  routing {}",
                    step.routing.explain(step.collection)
                )?;
            }
        }
        if let Some(cycle) = &self.cycle {
            writeln!(f, "  refused: {cycle}")?;
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
                    "  on delete, or when `{via}` or `{}` changes: 1 find of the parents before, then recompute their {}.{} (1 aggregate with $topN + 1 update per parent), in one transaction with the write when the deployment has them",
                    fields.join("`, `"),
                    copy.dependent,
                    copy.path
                )?;
            }
        }
        if !self.steps.is_empty() {
            let finds: std::collections::BTreeSet<(usize, &str)> = self
                .steps
                .iter()
                .filter(|s| s.level > 1)
                .map(|s| (s.level, s.copy_of.split('.').next().unwrap_or("")))
                .collect();
            let deeper = if finds.is_empty() {
                String::new()
            } else {
                format!(" + {} find(s) for the copies of copies", finds.len())
            };
            writeln!(
                f,
                "  commands for an update of one source touching every copied field: 1 findAndModify + {} update(s){deeper}, then 1 find re-reading the source (by default), or + commitTransaction (in a transaction)",
                self.steps.len()
            )?;
        }
        Ok(())
    }
}
