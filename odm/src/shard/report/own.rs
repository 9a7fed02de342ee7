//! The routes of a model's own operations, its tree's included.

use crate::catalog::CopyKind;
use crate::model::Model;

use super::Routes;

/// The model's own operations: inserts, reads and writes by id, of loaded documents, and the
/// reads of ids before deletes.
pub(super) fn own_operations<T: Model>(out: &mut Routes<'_>) {
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
    // A soft delete is an update of the document, with nothing before it; a tree's delete is
    // its rule's (below); a model with delete rules reads the ids (and shard key) of what it
    // deletes, then deletes by them.
    let soft = T::entry().soft_delete;
    let tree = T::entry().tree.is_some();
    let rules = soft.is_none() && !tree && crate::relations::has_rules(out.catalog, c);
    match soft {
        Some(field) => soft_delete(out, &model, field),
        None if rules => {
            out.add(
                format!("delete_document of a loaded {model}: its id read (with its shard key)"),
                c,
                format!("find {c} {{ _id, <its shard key> }}"),
                &with_id,
            );
            out.add(
                format!("delete_document of a loaded {model}: the delete, by the id and shard key read"),
                c,
                format!("delete {c} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}"),
                &with_id,
            );
        }
        None if tree => {}
        None => out.add(
            format!("delete_document of a loaded {model}"),
            c,
            format!("delete {c} {{ _id, <its shard key> }}"),
            &with_id,
        ),
    }
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
    if rules {
        out.add_open(
            format!("delete_one / delete_many of {model}s: the ids read (with their shard key)"),
            c,
            format!("find {c} <filter>"),
            &[],
        );
        out.add(
                format!("delete_one / delete_many of {model}s: each chunk"),
                c,
                format!("delete {c} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}"),
                &with_id,
            );
        if out
            .catalog
            .copies_from(c)
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
    }
    tree_routes::<T>(out);
}

/// A tree's inserts, moves, queries and deletes. The parents and the node of a write by id
/// are read first for their shard key (and ancestors), then written naming it.
pub(super) fn tree_routes<T: Model>(out: &mut Routes<'_>) {
    let Some(tree) = T::entry().tree else {
        return;
    };
    let (c, model, with_id) = (out.c, out.model.clone(), out.with_id.clone());
    let one = format!("tree insert of a {model} under a parent");
    out.add(
        format!("{one}: the parent's shard key read"),
        c,
        format!("find {c} {{ _id }}"),
        &["_id"],
    );
    out.add(
        format!("{one}: the parent marked, its ancestors read (in a transaction)"),
        c,
        format!("findAndModify {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
    out.add(
        format!("{one}: the parent's mark removed"),
        c,
        format!("update {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
    let several = format!("tree insert of {model}s under several parents");
    out.add(
        format!("{several}: the parents marked (in a transaction)"),
        c,
        format!("update {c} {{ _id: {{ $in: <parents> }} }}"),
        &["_id"],
    );
    out.add(
        format!("{several}: the parents read"),
        c,
        format!("find {c} {{ _id: {{ $in: <parents> }} }}"),
        &["_id"],
    );
    out.add(
        format!("{several}: the parents' marks removed"),
        c,
        format!(
            "update {c} {{ _id: {{ $in: <parents> }}, <its shard key>: {{ $in: <values read> }} }}"
        ),
        &with_id,
    );
    let moved = format!("tree move of a {model}");
    out.add(
        format!("{moved}: the new parent's and the node's shard key read"),
        c,
        format!("find {c} {{ _id }}"),
        &["_id"],
    );
    out.add(
        format!("{moved}: the new parent marked, its ancestors read (in a transaction)"),
        c,
        format!("findAndModify {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
    out.add(
        format!("{moved}: the node set"),
        c,
        format!("findAndModify {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
    out.add(
        format!("{moved}: its descendants' ancestors"),
        c,
        format!("update {c} {{ {}: <node> }}", tree.ancestors),
        &[tree.ancestors],
    );
    out.add(
        format!("{moved}: the new parent's mark removed"),
        c,
        format!("update {c} {{ _id, <its shard key read> }}"),
        &with_id,
    );
    out.add(
        format!("tree children of a {model}"),
        c,
        format!("find {c} {{ {}: <node> }}", tree.parent),
        &[tree.parent],
    );
    tree_delete_routes(out, tree);
}

/// A tree's delete: the ids read, then its rule's commands and the nodes deleted.
fn tree_delete_routes(out: &mut Routes<'_>, tree: crate::catalog::TreeInfo) {
    let (c, model) = (out.c, out.model.clone());
    let nodes = (
        "the nodes deleted",
        format!("delete {c} {{ _id: {{ $in: <ids> }} }}"),
        vec!["_id"],
    );
    let deleted = match tree.on_delete {
        crate::catalog::DeleteRule::Restrict => vec![
            (
                "restrict: their children counted",
                format!(
                    "aggregate {c} {{ {}: {{ $in: <ids> }}, _id: {{ $nin: <ids> }} }}",
                    tree.parent
                ),
                vec![tree.parent],
            ),
            nodes,
        ],
        crate::catalog::DeleteRule::Cascade => vec![(
            "cascade: the nodes and their subtrees deleted",
            format!(
                "delete {c} {{ $or: [{{ _id: {{ $in: <ids> }} }}, {{ {}: {{ $in: <ids> }} }}] }}",
                tree.ancestors
            ),
            vec![],
        )],
        crate::catalog::DeleteRule::Lift => vec![
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
            nodes,
        ],
    };
    out.add_open(
        format!("tree delete of {model}s: the ids read"),
        c,
        format!("find {c} <filter>"),
        &[],
    );
    for (what, command, named) in deleted {
        out.add(
            format!("tree delete of {model}s: {what}"),
            c,
            command,
            &named,
        );
    }
}

/// The routes of a loaded document's soft delete: one update of it; or, when it marks holders,
/// its id read, each rule's holders marked, the document marked by its id (see
/// [`crate::soft_delete::marks`]).
fn soft_delete(out: &mut Routes<'_>, model: &str, field: &str) {
    let c = out.c;
    let with_id = out.with_id.clone();
    if !crate::soft_delete::marks::marks_holders(out.catalog, c) {
        out.add(
            format!("delete_document of a loaded {model}"),
            c,
            format!("update {c} {{ _id, <its shard key> }} (a soft delete: `{field}` set)"),
            &with_id,
        );
        return;
    }
    out.add(
        format!("delete_document of a loaded {model}: its id read"),
        c,
        format!("find {c} {{ _id, <its shard key> }}"),
        &with_id,
    );
    for (r, holder_field) in crate::soft_delete::marks::rules(out.catalog, c) {
        out.add(
            format!("delete_document of a loaded {model}: the holders it marks"),
            r.from,
            format!(
                "update {} {{ {}: {{ $in: <ids read> }} }} (a soft delete: `{holder_field}` set)",
                r.from, r.path
            ),
            &[r.path.as_str()],
        );
    }
    out.add(
        format!("delete_document of a loaded {model}: the mark, by the id read"),
        c,
        format!("update {c} {{ _id: {{ $in: <ids read> }} }} (a soft delete: `{field}` set)"),
        &["_id"],
    );
}
