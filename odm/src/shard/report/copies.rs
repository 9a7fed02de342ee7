//! The routes of copies: taken on insert, cascaded from the model, written into it.

use crate::catalog::CopyKind;

use super::Routes;

/// What its documents hold copies of: read from the sources on insert and replace, and the
/// settle of the documents written.
pub(super) fn copies_held(out: &mut Routes<'_>) {
    let (c, with_id) = (out.c, out.with_id.clone());
    for copy in out.catalog.copies_into(c) {
        if matches!(copy.kind, CopyKind::Latest { .. }) {
            let CopyKind::Latest { via, .. } = &copy.kind else {
                continue;
            };
            let recompute = format!(
                "recompute of {c}.{} (the latest {})",
                copy.path, copy.source
            );
            out.add(
                format!("{recompute}: the latest read"),
                copy.source,
                format!(
                    "aggregate {} {{ {via}: {{ $in: <parents> }} }}",
                    copy.source
                ),
                &[via.as_str()],
            );
            out.add(
                format!("{recompute}: each parent's array set"),
                c,
                format!("update {c} {{ _id: <parent> }}"),
                &["_id"],
            );
            continue;
        }
        let by = match &copy.kind {
            CopyKind::Summary { id, .. } => format!("{}.{id}", copy.path),
            CopyKind::Flat { via } | CopyKind::Latest { via, .. } => via.clone(),
        };
        out.add(
            format!(
                "fill of {c}.{} from {} on insert or replace",
                copy.path, copy.source
            ),
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
pub(super) fn copies_taken(out: &mut Routes<'_>) {
    let (c, model) = (out.c, out.model.clone());
    let copies = out.catalog.copies_from(c);
    if copies
        .iter()
        .any(|copy| !matches!(copy.kind, CopyKind::Latest { .. }))
    {
        source_writes(out);
    }
    for copy in copies {
        let fields: Vec<&str> = copy.fields.iter().map(|(f, _)| f.as_str()).collect();
        let what = format!("{model}.{}", fields.join("/"));
        if copy.background {
            background_routes(out, &what, copy);
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

/// The writes of a model whose fields are copied, by id and of many: the key read or carried,
/// the update, and the re-read of the sources once their copies are written.
fn source_writes(out: &mut Routes<'_>) {
    let (c, model) = (out.c, out.model.clone());
    let (key_names, with_id) = (out.key_names.clone(), out.with_id.clone());
    // The shard key the sources' writes and re-reads name: read with the ids, or returned by
    // the `findAndModify` (none for a key `_id` alone or a mutable one).
    let carried: Vec<&str> = match crate::shard::KeyCarrier::of(out.catalog, c).is_empty() {
        true => vec!["_id"],
        false => with_id.clone(),
    };
    let by_id = format!("update_by_id of a {model} whose fields are copied");
    if !key_names.is_empty() {
        out.add(
            format!("{by_id}: its shard key read"),
            c,
            format!("find {c} {{ _id }}"),
            &["_id"],
        );
        out.add(
            format!("{by_id}: the update"),
            c,
            format!("findAndModify {c} {{ _id, <its shard key read> }}"),
            &with_id,
        );
    }
    out.add(
        format!("{by_id}: the source re-read once its copies are written"),
        c,
        format!(
            "find {c} {{ _id: {{ $in: <ids> }}, <its shard key>: {{ $in: <values returned> }} }}"
        ),
        &carried,
    );
    let many = format!("update_many of {model}s whose fields are copied");
    out.add_open(
        format!("{many}: the ids read (with their shard key)"),
        c,
        format!("find {c} <filter>"),
        &[],
    );
    out.add(
            format!("{many}: the new values read, and re-read once the copies are written, each chunk"),
            c,
            format!(
                "find {c} {{ $and: [{{ _id: {{ $in: <ids read> }} }}, {{ <its shard key>: {{ $in: <values read> }} }}] }}"
            ),
            &carried,
        );
    out.add(
            format!("{many}: each chunk"),
            c,
            format!(
                "update_many {c} {{ $and: [<filter>, {{ _id: {{ $in: <ids read> }} }}, {{ <its shard key>: {{ $in: <values read> }} }}] }}"
            ),
            &carried,
        );
}

/// What other models' cascades write into this collection.
pub(super) fn written_by_others(out: &mut Routes<'_>) {
    let c = out.c;
    for copy in out.catalog.copies_into(c) {
        if let (CopyKind::Summary { id, .. }, false) = (&copy.kind, copy.background) {
            let source = out
                .catalog
                .models()
                .iter()
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
        let source = out
            .catalog
            .models()
            .iter()
            .find(|m| m.collection == copy.source)
            .map_or(copy.source, |m| m.type_name);
        let fields: Vec<&str> = copy.fields.iter().map(|(f, _)| f.as_str()).collect();
        let what = format!("{source}.{}", fields.join("/"));
        if copy.background {
            background_routes(out, &what, copy);
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
fn background_routes(out: &mut Routes<'_>, what: &str, copy: &crate::catalog::CopyInfo) {
    let (dependent, path) = (copy.dependent, &copy.path);
    let by = match &copy.kind {
        CopyKind::Summary { id, .. } => format!("{path}.{id}"),
        CopyKind::Flat { via } | CopyKind::Latest { via, .. } => via.clone(),
    };
    let intents = crate::denormalize::INTENTS;
    out.add(
        format!("background cascade of {what} into {dependent}.{path}: the intent"),
        intents,
        format!(
            "update {intents} {{ _id: {{ source, id }} }} (upsert, in the source's transaction)"
        ),
        &["_id"],
    );
    out.add(
        format!("background cascade of {what} into {dependent}.{path}: the worker's walk"),
        dependent,
        format!("find {dependent} {{ {by}: <source id> }} (ids and shard key)"),
        &[by.as_str()],
    );
    // Each batch still names the source, so that a dependent that moved to another source
    // since the walk is left alone.
    let mut named = vec!["_id", by.as_str()];
    named.extend(
        out.catalog
            .shard_key_of(dependent)
            .map(|k| k.names())
            .unwrap_or_default(),
    );
    out.add(
        format!("background cascade of {what} into {dependent}.{path}: each batch"),
        dependent,
        format!("update_many {dependent} {{ _id: {{ $in: <batch> }}, <its shard key>: {{ $in: <values read> }}, {by}: {{ $in: <source id> }} }}"),
        &named,
    );
}
