//! The routes of a model's report, section by section: what each generated operation sends.

use crate::model::Model;
use crate::schema::{
    copies_from, copies_into, references_to, registered_models, shard_key_of, CopyKind, OnDelete,
};

use super::routing::Route;

/// Every route of model `T` (collection `c`, named `model`, whose shard key has the fields
/// `key_names`; `with_id` is `_id` and them).
pub(super) fn routes_of<T: Model>(
    c: &'static str,
    model: &str,
    key_names: Vec<&'static str>,
    with_id: Vec<&'static str>,
) -> Vec<Route> {
    let mut out = Routes {
        c,
        model: model.to_owned(),
        key_names,
        with_id,
        routes: Vec::new(),
    };
    own_operations::<T>(&mut out);
    copies_held(&mut out);
    copies_taken(&mut out);
    references::<T>(&mut out);
    deletes(&mut out);
    written_by_others(&mut out);
    out.routes
}

/// The routes of one report as they are gathered, with what every section needs.
struct Routes {
    c: &'static str,
    model: String,
    key_names: Vec<&'static str>,
    with_id: Vec<&'static str>,
    routes: Vec<Route>,
}

impl Routes {
    fn add(&mut self, operation: String, collection: &str, command: String, named: &[&str]) {
        self.routes
            .push(Route::new(operation, collection, command, named));
    }
}

/// The model's own operations: inserts, reads and writes by id, of loaded documents, and the
/// reads of ids before deletes.
fn own_operations<T: Model>(out: &mut Routes) {
    let (c, model) = (out.c, out.model.clone());
    let (key_names, with_id) = (out.key_names.clone(), out.with_id.clone());
    // The model's own operations.
    out.add(
        format!("insert into {c}"),
        c,
        format!("insert {c} (each document holds its key)"),
        &key_names,
    );
    out.add(
        format!("replace_one (save) of a loaded {model}"),
        c,
        format!("update {c} {{ _id, <its shard key> }} (a replacement)"),
        &with_id,
    );
    out.add(
        format!("delete_document of a loaded {model}"),
        c,
        format!("delete {c} {{ _id, <its shard key> }}"),
        &with_id,
    );
    out.add(
        format!("update_document of a loaded {model}"),
        c,
        format!("update {c} {{ _id, <its shard key> }}"),
        &with_id,
    );
    out.add(
        format!("get of {model}"),
        c,
        format!("find {c} {{ _id }}"),
        &["_id"],
    );
    out.add(
        format!("update_by_id of {model}"),
        c,
        format!("update {c} {{ _id }}"),
        &["_id"],
    );
    // Deleting: a model with delete rules, summaries elsewhere or latest-N parents reads
    // the ids (and shard key) of what it deletes, then deletes by them.
    let delete_work =
        !references_to(c).is_empty() || !copies_from(c).is_empty() || T::TREE.is_some();
    if delete_work {
        out.add(
            format!("delete_document of a loaded {model}: its id read (with its shard key)"),
            c,
            format!("find {c} {{ _id, <its shard key> }}"),
            &with_id,
        );
        out.add(
            format!("delete_one / delete_many of {model}s: the ids read (with their shard key)"),
            c,
            format!("find {c} <filter>"),
            &[],
        );
        if copies_from(c)
            .iter()
            .any(|copy| matches!(copy.kind, CopyKind::Latest { .. }))
        {
            out.add(
                    format!("delete of {model}s: the parents of their latest-N summaries read"),
                    c,
                    format!("find {c} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}"),
                    &with_id,
                );
        }
        out.add(
                format!("delete_one / delete_many of {model}s: each chunk"),
                c,
                format!("delete {c} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}"),
                &with_id,
            );
    }
    tree_routes::<T>(out);
}

/// A tree's inserts, moves, queries and deletes.
fn tree_routes<T: Model>(out: &mut Routes) {
    let Some(tree) = T::TREE else {
        return;
    };
    let (c, model, with_id) = (out.c, out.model.clone(), out.with_id.clone());
    out.add(
        format!("tree move of a {model} subtree (its descendants)"),
        c,
        format!("update {c} {{ {}: <node> }}", tree.ancestors),
        &[tree.ancestors],
    );
    out.add(
        format!("tree children of a {model}"),
        c,
        format!("find {c} {{ {}: <node> }}", tree.parent),
        &[tree.parent],
    );
    let deleted = match tree.on_delete {
        crate::schema::DeleteRule::Restrict => vec![(
            "restrict: their children counted",
            format!(
                "aggregate {c} {{ {}: {{ $in: <ids> }}, _id: {{ $nin: <ids> }} }}",
                tree.parent
            ),
            vec![tree.parent],
        )],
        crate::schema::DeleteRule::Cascade => vec![(
            "cascade: the nodes and their subtrees",
            format!(
                "delete {c} {{ $or: [{{ _id: {{ $in: <ids> }} }}, {{ {}: {{ $in: <ids> }} }}] }}",
                tree.ancestors
            ),
            vec![],
        )],
        crate::schema::DeleteRule::Lift => vec![
            (
                "lift: the nodes pulled from their descendants' ancestors",
                format!("update {c} {{ {}: {{ $in: <ids> }} }}", tree.ancestors),
                vec![tree.ancestors],
            ),
            (
                "lift: their children given a new parent",
                format!("update {c} {{ {}: {{ $in: <ids> }} }}", tree.parent),
                vec![tree.parent],
            ),
        ],
    };
    out.add(
        format!("tree delete of {model}s: the ids read"),
        c,
        format!("find {c} <filter>"),
        &[],
    );
    for (what, command, named) in deleted {
        out.add(
            format!("tree delete of {model}s, {what}"),
            c,
            command,
            &named,
        );
    }
    out.add(
        format!("tree delete of {model}s: the nodes deleted"),
        c,
        format!("delete {c} {{ _id: {{ $in: <ids> }} }}"),
        &["_id"],
    );
    out.add(
        format!(
            "tree insert or move under a {model}: the parent read (its ancestors and shard key)"
        ),
        c,
        format!("find {c} {{ _id }}"),
        &["_id"],
    );
    out.add(
        format!("tree insert or move under a {model}: the parent marked (in a transaction)"),
        c,
        format!("findAndModify {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
    out.add(
        format!("tree move of a {model}: the node set (its shard key read first, as the parent's)"),
        c,
        format!("findAndModify {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
    out.add(
        format!("tree insert of {model}s under several parents: the parents read"),
        c,
        format!("find {c} {{ _id: {{ $in: <parents> }} }}"),
        &["_id"],
    );
    out.add(
        format!(
            "tree insert of {model}s under several parents: the parents marked (in a transaction)"
        ),
        c,
        format!("update {c} {{ _id: {{ $in: <parents> }} }}"),
        &["_id"],
    );
    out.add(
        format!("tree insert or move under a {model}: the parent's mark removed"),
        c,
        format!("update {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
}

/// What its documents hold copies of: read from the sources on insert and replace, and the
/// settle of the documents written.
fn copies_held(out: &mut Routes) {
    let (c, with_id) = (out.c, out.with_id.clone());
    for copy in copies_into(c) {
        if matches!(copy.kind, CopyKind::Latest { .. }) {
            let CopyKind::Latest { via, .. } = &copy.kind else {
                continue;
            };
            out.add(
                format!(
                    "recompute of {c}.{} (the latest {})",
                    copy.path, copy.source
                ),
                copy.source,
                format!("aggregate {} {{ {via}: <parent> }}", copy.source),
                &[via.as_str()],
            );
            continue;
        }
        let by = match &copy.kind {
            CopyKind::Summary { id, .. } => format!("{}.{id}", copy.path),
            CopyKind::Flat { via } | CopyKind::Latest { via, .. } => via.clone(),
        };
        out.add(
            format!("fill of {c}.{} from {} on insert", copy.path, copy.source),
            copy.source,
            format!("find {} {{ _id: {{ $in: <ids> }} }}", copy.source),
            &["_id"],
        );
        out.add(
                format!(
                    "settle of {c}.{} after an insert or replacement whose source in {} changed meanwhile",
                    copy.path, copy.source
                ),
                c,
                format!(
                    "update_many {c} {{ {by}: {{ $in: <changed> }}, _id: {{ $in: <written> }}, <its shard key>: {{ $in: <values written> }} }}"
                ),
                &[with_id.as_slice(), &[by.as_str()]].concat(),
            );
    }
}

/// What its operations write elsewhere: the copies of its fields.
fn copies_taken(out: &mut Routes) {
    let (c, model) = (out.c, out.model.clone());
    let (key_names, with_id) = (out.key_names.clone(), out.with_id.clone());
    // What its operations write elsewhere: copies of its fields.
    let copies = copies_from(c);
    if copies
        .iter()
        .any(|copy| !matches!(copy.kind, CopyKind::Latest { .. }))
    {
        if !key_names.is_empty() {
            out.add(
                format!("update_by_id of a {model} whose fields are copied: its shard key read"),
                c,
                format!("find {c} {{ _id }}"),
                &["_id"],
            );
            out.add(
                format!("update_by_id of a {model} whose fields are copied: the update"),
                c,
                format!("findAndModify {c} {{ _id, <its shard key read> }}"),
                &with_id,
            );
        }
        out.add(
                format!("update_many of {model}s whose fields are copied: the ids read (with their shard key)"),
                c,
                format!("find {c} <filter>"),
                &[],
            );
        out.add(
                format!("update_many of {model}s whose fields are copied: the new values read, each chunk"),
                c,
                format!(
                    "find {c} {{ $and: [{{ _id: {{ $in: <ids read> }} }}, {{ <its shard key>: {{ $in: <values read> }} }}] }}"
                ),
                &with_id,
            );
        out.add(
                format!("update_many of {model}s whose fields are copied: each chunk"),
                c,
                format!(
                    "update_many {c} {{ $and: [<filter>, {{ _id: {{ $in: <ids read> }} }}, {{ <its shard key>: {{ $in: <values read> }} }}] }}"
                ),
                &with_id,
            );
    }
    for copy in copies {
        let fields: Vec<&str> = copy.fields.iter().map(|(f, _)| f.as_str()).collect();
        let what = format!("{model}.{}", fields.join("/"));
        if copy.background {
            background_routes(&mut |o, col, cmd, n| out.add(o, col, cmd, n), &what, copy);
            continue;
        }
        match &copy.kind {
            CopyKind::Summary { id, .. } => {
                let by = format!("{}.{id}", copy.path);
                out.add(
                    format!("cascade of {what} into {}.{}", copy.dependent, copy.path),
                    copy.dependent,
                    format!(
                        "update_many {} {{ {by}: {{ $in: <ids> }} }}",
                        copy.dependent
                    ),
                    &[by.as_str()],
                );
            }
            CopyKind::Flat { via } => out.add(
                format!("cascade of {what} into {}.{}", copy.dependent, copy.path),
                copy.dependent,
                format!(
                    "update_many {} {{ {via}: {{ $in: <ids> }} }}",
                    copy.dependent
                ),
                &[via.as_str()],
            ),
            CopyKind::Latest { via, .. } => out.add(
                format!(
                    "push of a {model} onto {}.{} (through `{via}`)",
                    copy.dependent, copy.path
                ),
                copy.dependent,
                format!("update {} {{ _id: <{via}> }}", copy.dependent),
                &["_id"],
            ),
        }
    }
}

/// Its references: populate and two-way moves read or write the targets by id.
fn references<T: Model>(out: &mut Routes) {
    let (c, model) = (out.c, out.model.clone());
    let (key_names, with_id) = (out.key_names.clone(), out.with_id.clone());
    // Its references: populate and two-way moves read or write the targets by id.
    for r in T::references() {
        out.add(
            format!("populate of {model}.{}", r.path),
            r.to,
            format!("find {} {{ _id: {{ $in: <ids> }} }}", r.to),
            &["_id"],
        );
        out.add(
                format!(
                    "populate of {model}.{} by the lookup plan (never chosen by `Plan::Auto` on a sharded cluster)",
                    r.path
                ),
                r.to,
                format!(
                    "aggregate {c} [.., {{ $lookup: {{ from: {}, foreignField: _id }} }}] (one look-up per document)",
                    r.to
                ),
                &["_id"],
            );
        if let Some(inverse) = &r.inverse {
            if !key_names.is_empty() {
                out.add(
                    format!(
                        "two-way move of {model}.{} (the {model}): its shard key read",
                        r.path
                    ),
                    c,
                    format!("find {c} {{ _id }}"),
                    &["_id"],
                );
                out.add(
                    format!("two-way move of {model}.{} (the {model})", r.path),
                    c,
                    format!("findAndModify {c} {{ _id, <its shard key read> }}"),
                    &with_id,
                );
            }
            out.add(
                format!(
                    "two-way move of {model}.{} (the inverse {}.{inverse})",
                    r.path, r.to
                ),
                r.to,
                format!("update {} {{ _id: <old/new target> }}", r.to),
                &["_id"],
            );
        }
    }
}

/// Deleting its documents: each rule of the references to it, and the summaries of them held
/// elsewhere.
fn deletes(out: &mut Routes) {
    let (c, model) = (out.c, out.model.clone());
    for r in references_to(c) {
        let rule = match r.on_delete {
            OnDelete::Restrict => "restrict (count)",
            OnDelete::Nullify => "nullify",
            OnDelete::Pull => "pull",
            OnDelete::Cascade => "cascade",
        };
        let verb = match r.on_delete {
            OnDelete::Restrict => "aggregate",
            OnDelete::Nullify | OnDelete::Pull => "update_many",
            OnDelete::Cascade => "find",
        };
        out.add(
            format!("delete of a {model}: {rule} on {}.{}", r.from, r.path),
            r.from,
            format!("{verb} {} {{ {}: {{ $in: <ids> }} }}", r.from, r.path),
            &[r.path.as_str()],
        );
        if r.on_delete == OnDelete::Cascade {
            // A collection nothing else depends on is deleted by the reference alone;
            // otherwise by the ids (and shard key values) the `find` read.
            out.add(
                format!(
                    "delete of a {model}: cascade on {}.{}, deleted by reference",
                    r.from, r.path
                ),
                r.from,
                format!("delete {} {{ {}: {{ $in: <ids> }} }}", r.from, r.path),
                &[r.path.as_str()],
            );
            let mut named = vec!["_id"];
            named.extend(shard_key_of(r.from).map(|k| k.names()).unwrap_or_default());
            out.add(
                    format!("delete of a {model}: cascade on {}.{}, deleted by the ids read", r.from, r.path),
                    r.from,
                    format!("delete {} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}", r.from),
                    &named,
                );
        }
    }
    // Deleting its documents: the summaries of them held elsewhere are pulled (in the
    // delete's plan, and again once the delete is visible).
    for copy in copies_from(c) {
        if let CopyKind::Summary { id, .. } = &copy.kind {
            let by = format!("{}.{id}", copy.path);
            out.add(
                format!(
                    "delete of a {model}: its summaries pulled from {}.{}",
                    copy.dependent, copy.path
                ),
                copy.dependent,
                format!(
                    "update_many {} {{ {by}: {{ $in: <ids> }} }}",
                    copy.dependent
                ),
                &[by.as_str()],
            );
        }
    }
}

/// What other models' cascades write into this collection.
fn written_by_others(out: &mut Routes) {
    let c = out.c;
    for copy in copies_into(c) {
        if let (CopyKind::Summary { id, .. }, false) = (&copy.kind, copy.background) {
            let source = registered_models()
                .into_iter()
                .find(|m| m.collection == copy.source)
                .map_or(copy.source, |m| m.type_name);
            let by = format!("{}.{id}", copy.path);
            out.add(
                format!(
                    "delete of a {source}: its summaries pulled from {c}.{}",
                    copy.path
                ),
                c,
                format!("update_many {c} {{ {by}: {{ $in: <ids> }} }}"),
                &[by.as_str()],
            );
        }
        let source = registered_models()
            .into_iter()
            .find(|m| m.collection == copy.source)
            .map_or(copy.source, |m| m.type_name);
        let fields: Vec<&str> = copy.fields.iter().map(|(f, _)| f.as_str()).collect();
        let what = format!("{source}.{}", fields.join("/"));
        if copy.background {
            background_routes(&mut |o, col, cmd, n| out.add(o, col, cmd, n), &what, copy);
            continue;
        }
        let (command, by) = match &copy.kind {
            CopyKind::Summary { id, .. } => {
                let by = format!("{}.{id}", copy.path);
                (format!("update_many {c} {{ {by}: {{ $in: <ids> }} }}"), by)
            }
            CopyKind::Flat { via } => (
                format!("update_many {c} {{ {via}: {{ $in: <ids> }} }}"),
                via.clone(),
            ),
            CopyKind::Latest { via, .. } => {
                (format!("update {c} {{ _id: <{via}> }}"), "_id".to_owned())
            }
        };
        let operation = match &copy.kind {
            CopyKind::Latest { .. } => format!("push of a {source} onto {c}.{}", copy.path),
            _ => format!("cascade of {what} into {c}.{}", copy.path),
        };
        out.add(operation, c, command, &[by.as_str()]);
    }
}

/// The commands of a background cascade of `what` into `copy`: the intent recorded with the
/// source's update, the worker's walk over the dependents of a source, and its batches, which
/// name the dependents' shard key values read by the walk.
fn background_routes(
    add: &mut impl FnMut(String, &str, String, &[&str]),
    what: &str,
    copy: &crate::denormalize::CopyInfo,
) {
    let (dependent, path) = (copy.dependent, &copy.path);
    let by = match &copy.kind {
        CopyKind::Summary { id, .. } => format!("{path}.{id}"),
        CopyKind::Flat { via } | CopyKind::Latest { via, .. } => via.clone(),
    };
    let intents = crate::denormalize::INTENTS;
    add(
        format!("background cascade of {what} into {dependent}.{path}: the intent"),
        intents,
        format!(
            "update {intents} {{ _id: {{ source, id }} }} (upsert, in the source's transaction)"
        ),
        &["_id"],
    );
    add(
        format!("background cascade of {what} into {dependent}.{path}: the worker's walk"),
        dependent,
        format!("find {dependent} {{ {by}: <source id> }} (ids and shard key)"),
        &[by.as_str()],
    );
    let mut named = vec!["_id"];
    named.extend(
        shard_key_of(dependent)
            .map(|k| k.names())
            .unwrap_or_default(),
    );
    add(
        format!("background cascade of {what} into {dependent}.{path}: each batch"),
        dependent,
        format!("update_many {dependent} {{ _id: {{ $in: <batch> }}, <its shard key>: {{ $in: <values read> }} }}"),
        &named,
    );
}
