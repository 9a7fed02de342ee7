//! The cascade plan: what a change of each source field triggers.

use std::collections::BTreeMap;
use std::fmt;

use bson::{Bson, Document};

use super::{CopyInfo, CopyKind};
use crate::catalog::Catalog;
use crate::document::overlaps;
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
    pub routing: crate::catalog::RouteVerdict,
    /// Who sends the update: the update of the source, or later the cascade worker (a copy
    /// declared `cascade = "background"`, and the copies of that copy below it).
    pub sent_by: SentBy,
    /// For a copy the cascade worker writes: its walk over the dependents of one source
    /// (`find`, their `_id`s only), whose batches the update then writes.
    pub walk: Option<CascadeWalk>,
}

/// The cascade worker's walk over the dependents of one source.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CascadeWalk {
    /// The filter of the `find`, `<id>` for the source.
    pub filter: String,
    /// The index that serves it.
    pub index: String,
}

/// Who sends a step of a cascade plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SentBy {
    /// The update of the source, before it returns.
    Request,
    /// The [cascade worker](crate::denormalize::CascadeWorker), later: one update per batch of
    /// dependents, each in a transaction of its own. The update of the source records an
    /// intent instead ([`CascadePlan::intents`]).
    Worker,
}

/// The intent an update of the source records, in its transaction, for the copies of one of
/// its fields cascaded in the background (see [`CascadeWorker`](crate::denormalize::CascadeWorker)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CascadeIntent {
    /// The source field (stored path).
    pub field: String,
    /// The collection of intents, [`INTENTS`](crate::denormalize::INTENTS).
    pub collection: &'static str,
    /// The filter of the upsert, `<id>` for the updated source.
    pub filter: String,
    /// Its update.
    pub update: String,
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
    /// The intents an update of the source records for its copies cascaded in the
    /// background, one per copied field that has such copies.
    pub intents: Vec<CascadeIntent>,
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
/// A copy declared `cascade = "background"` is planned as what is sent for it: the intent the
/// update records in its transaction ([`CascadePlan::intents`], no copy written), then, later,
/// the [cascade worker](crate::denormalize::CascadeWorker)'s walk over the dependents of a
/// source ([`CascadeStep::walk`]) and the update of each batch of them, with the copies of
/// that copy below it ([`SentBy::Worker`]). The intent and the worker's filters and updates
/// are built by the code that sends them, with placeholders (`<id>`, `<new name>`) for the
/// values of a run. Sends nothing.
///
/// Among every linked model; [`cascade_plan_in`] for a handle's [`Catalog`].
pub fn cascade_plan<T: Model>() -> CascadePlan {
    cascade_plan_in::<T>(&Catalog::linked())
}

/// [`cascade_plan`] among the models of `catalog`.
pub fn cascade_plan_in<T: Model>(catalog: &Catalog) -> CascadePlan {
    let mut groups: Vec<((String, &'static str), Vec<CascadeStep>)> = Vec::new();
    let mut on_insert = Vec::new();
    let copies = catalog.copies_from(T::COLLECTION);
    for copy in copies {
        if matches!(copy.kind, CopyKind::Latest { .. }) {
            on_insert.push(copy.clone());
            continue;
        }
        for (from, to) in &copy.fields {
            let first = match copy.background {
                true => background_step(catalog, copy, from, to),
                false => step(catalog, copy, from, to, "<ids>"),
            };
            let Some(mut step) = first else {
                continue;
            };
            step.field = from.clone();
            let mut group = vec![step];
            deeper(catalog, copy, from, 2, &mut group);
            // The levels below a copy the worker writes are written in its batches.
            if copy.background {
                for s in &mut group {
                    s.sent_by = SentBy::Worker;
                }
            }
            groups.push(((from.clone(), copy.dependent), group));
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    CascadePlan {
        source: T::COLLECTION,
        steps: groups.into_iter().flat_map(|(_, g)| g).collect(),
        on_insert,
        intents: intents(T::COLLECTION, copies),
        cycle: super::graph::check_copies_in(catalog)
            .err()
            .map(|e| e.to_string()),
    }
}

/// Where the plan puts a value known only when the update runs: a string starting with this
/// character, shown as the rest of it (`<id>`). Never sent.
const SLOT: char = '\u{1}';

fn slot(name: &str) -> Bson {
    Bson::String(format!("{SLOT}<{name}>"))
}

/// The intents an update of the source `source` records, per copied field with copies
/// cascaded in the background: the statement the update sends, for the source `<id>`.
fn intents(source: &str, copies: &[CopyInfo]) -> Vec<CascadeIntent> {
    let mut fields: BTreeMap<&str, Vec<&CopyInfo>> = BTreeMap::new();
    for copy in copies.iter().filter(|c| c.background) {
        if matches!(copy.kind, CopyKind::Latest { .. }) {
            continue;
        }
        for (from, _) in &copy.fields {
            fields.entry(from.as_str()).or_default().push(copy);
        }
    }
    fields
        .into_iter()
        .map(|(field, copies)| {
            let statement = super::background::intent_of(source, &copies, slot("id"), slot("now"));
            let part = |key: &str| match statement.get(key) {
                Some(Bson::Document(d)) => show(d),
                _ => "{}".to_owned(),
            };
            CascadeIntent {
                field: field.to_owned(),
                collection: super::INTENTS,
                filter: part("q"),
                update: part("u"),
            }
        })
        .collect()
}

/// The step of a copy cascaded in the background (its field `to`, from the source field
/// `from`), as the cascade worker sends it, from the same description: the walk over the
/// dependents of a source, then the update of each batch of them, which writes every field of
/// the copy.
fn background_step(
    catalog: &Catalog,
    copy: &CopyInfo,
    from: &str,
    to: &str,
) -> Option<CascadeStep> {
    // The walk reads the index a cascade in the request would.
    let walk_index = step(catalog, copy, from, to, "<ids>")?.index;
    let values: Vec<(String, Bson)> = copy
        .fields
        .iter()
        .map(|(from, to)| (to.clone(), slot(&format!("new {from}"))))
        .collect();
    let sent = super::background::sent(
        catalog,
        copy,
        &slot("id"),
        &values,
        slot("ids of the batch"),
        |field| slot(&format!("their {field}")),
    );
    let mut update = show(&sent.update);
    if let Some(filters) = &sent.array_filters {
        let filters: Vec<String> = filters.iter().map(show).collect();
        update.push_str(&format!(", arrayFilters [{}]", filters.join(", ")));
    }
    // A batch names the `_id`s and the shard key values the walk read.
    let mut named = vec!["_id"];
    if let Some(key) = catalog.shard_key_of(copy.dependent) {
        named.extend(key.names());
    }
    Some(CascadeStep {
        field: from.to_owned(),
        collection: copy.dependent,
        model: copy.dependent_type,
        filter: show(&sent.filter),
        update,
        index: "_id_".to_owned(),
        commands: 1,
        level: 1,
        copy_of: format!("{}.{}", copy.source, from),
        routing: catalog.verdict(copy.dependent, &named),
        sent_by: SentBy::Worker,
        walk: Some(CascadeWalk {
            filter: show(&sent.walk),
            index: walk_index,
        }),
    })
}

/// A document as the plan shows it: keys unquoted unless they hold more than letters, digits,
/// `_`, `.` and `$`; values as BSON shows them, placeholders as their names (`<id>`).
fn show(d: &Document) -> String {
    let fields: Vec<String> = d
        .iter()
        .map(|(k, v)| {
            let plain = k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'));
            match plain {
                true => format!("{k}: {}", show_value(v)),
                false => format!("\"{k}\": {}", show_value(v)),
            }
        })
        .collect();
    match fields.is_empty() {
        true => "{}".to_owned(),
        false => format!("{{ {} }}", fields.join(", ")),
    }
}

fn show_value(v: &Bson) -> String {
    match v {
        Bson::String(s) if s.starts_with(SLOT) => s[SLOT.len_utf8()..].to_owned(),
        Bson::Document(d) => show(d),
        Bson::Array(items) => {
            let items: Vec<String> = items.iter().map(show_value).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
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
        routing: catalog.verdict(copy.dependent, &[by.as_str()]),
        sent_by: SentBy::Request,
        walk: None,
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
                        routing: catalog.verdict(next.dependent, &["_id"]),
                        sent_by: SentBy::Request,
                        walk: None,
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

impl fmt::Display for CascadePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cascade plan of `{}`:", self.source)?;
        if self.steps.is_empty() && self.on_insert.is_empty() {
            writeln!(f, "  nothing is copied from `{}`", self.source)?;
        }
        let mut at = 0;
        while at < self.steps.len() {
            let field = &self.steps[at].field;
            let end = at
                + self.steps[at..]
                    .iter()
                    .take_while(|s| &s.field == field)
                    .count();
            self.write_field(f, field, &self.steps[at..end])?;
            at = end;
        }
        if let Some(cycle) = &self.cycle {
            writeln!(f, "  refused: {cycle}")?;
        }
        self.write_on_insert(f)?;
        self.write_commands(f)
    }
}

impl CascadePlan {
    /// What a change of `field` sends: the request's steps, then the intent it records and
    /// the steps the cascade worker sends later.
    fn write_field(
        &self,
        f: &mut fmt::Formatter<'_>,
        field: &str,
        steps: &[CascadeStep],
    ) -> fmt::Result {
        writeln!(
            f,
            "  when `{field}` changes (the update becomes a findAndModify):"
        )?;
        let request: Vec<&CascadeStep> = steps
            .iter()
            .filter(|s| s.sent_by == SentBy::Request)
            .collect();
        write_steps(f, &request)?;
        let worker: Vec<&CascadeStep> = steps
            .iter()
            .filter(|s| s.sent_by == SentBy::Worker)
            .collect();
        if worker.is_empty() {
            return Ok(());
        }
        if let Some(intent) = self.intents.iter().find(|i| i.field == field) {
            writeln!(
                f,
                "    in the update's transaction, the intent of the background cascade (no copy written):"
            )?;
            writeln!(f, "    update {} (upsert)", intent.collection)?;
            writeln!(f, "      filter  {}", intent.filter)?;
            writeln!(f, "      update  {}", intent.update)?;
        }
        write_steps(f, &worker)
    }

    fn write_on_insert(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
        Ok(())
    }

    /// The commands of an update of one source, and those the cascade worker sends later.
    fn write_commands(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.steps.is_empty() {
            return Ok(());
        }
        let (request, worker): (Vec<&CascadeStep>, Vec<&CascadeStep>) = self
            .steps
            .iter()
            .partition(|s| s.sent_by == SentBy::Request);
        let head =
            "  commands for an update of one source touching every copied field: 1 findAndModify";
        if worker.is_empty() {
            return writeln!(
                f,
                "{head} + {} update(s){}, then 1 find re-reading the source (by default), or + commitTransaction (in a transaction)",
                request.len(),
                finds(&request)
            );
        }
        let now = match request.len() {
            0 => String::new(),
            n => format!(" + {n} update(s){}", finds(&request)),
        };
        let never = match request.len() {
            0 => String::new(),
            n => format!("; with `TransactionMode::Never` the {n} update(s) follow the commit, then 1 find re-reading the source"),
        };
        writeln!(
            f,
            "{head}{now} + 1 update of {} (the intent) + commitTransaction, in one transaction{never}",
            super::INTENTS
        )?;
        let first = worker.iter().filter(|s| s.level == 1).count();
        let below = match worker.len() - first {
            0 => String::new(),
            n => format!(
                " + {n} update(s){} for the copies of copies",
                finds(&worker)
            ),
        };
        writeln!(
            f,
            "  then the cascade worker, per source: 1 find and 1 findAndModify claiming the intent, 1 find of it, 1 find of the source; per copy ({first}), 1 find of its dependents (1 getMore per batch) and per batch 1 update of the intent + 1 update{below} + commitTransaction; last, 1 delete of the intent",
        )
    }
}

/// ` + N find(s) for the copies of copies`: one `find` per level below the first and copy
/// above, among `steps`; nothing when there is no such level.
fn finds(steps: &[&CascadeStep]) -> String {
    let finds: std::collections::BTreeSet<(usize, &str)> = steps
        .iter()
        .filter(|s| s.level > 1)
        .map(|s| (s.level, s.copy_of.split('.').next().unwrap_or("")))
        .collect();
    match finds.len() {
        0 => String::new(),
        n => format!(" + {n} find(s) for the copies of copies"),
    }
}

/// The steps, each level below the first under the `find` of the documents the level above
/// wrote; a step of the cascade worker under its walk.
fn write_steps(f: &mut fmt::Formatter<'_>, steps: &[&CascadeStep]) -> fmt::Result {
    let mut above: Option<(usize, &str)> = None;
    for step in steps {
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
        if let Some(walk) = &step.walk {
            writeln!(
                f,
                "    later, by the cascade worker: find {} {} (their _id, through {}), then per batch of them, in a transaction:",
                step.collection, walk.filter, walk.index
            )?;
        }
        writeln!(
            f,
            "    {indent}update_many {} ({})",
            step.collection, step.model
        )?;
        writeln!(f, "    {indent}  filter  {}", step.filter)?;
        writeln!(f, "    {indent}  update  {}", step.update)?;
        writeln!(f, "    {indent}  index   {}", step.index)?;
        // Only for a sharded dependent: an unsharded one has one place to go.
        if step.routing != crate::catalog::RouteVerdict::Unsharded {
            writeln!(
                f,
                "    {indent}  routing {}",
                step.routing.explain(step.collection)
            )?;
        }
    }
    Ok(())
}
