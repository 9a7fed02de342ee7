//! The routes of references: populate, two-way moves, delete rules.

use crate::catalog::{CopyKind, OnDelete};
use crate::model::Model;

use super::Routes;

/// Its references: populate and two-way moves read or write the targets by id.
pub(super) fn references<T: Model>(out: &mut Routes<'_>) {
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
            let moved = format!("two-way move of {model}.{}", r.path);
            if !key_names.is_empty() {
                out.add(
                    format!("{moved}: the {model}'s shard key read"),
                    c,
                    format!("find {c} {{ _id }}"),
                    &["_id"],
                );
                out.add(
                    format!("{moved}: the {model}"),
                    c,
                    format!("findAndModify {c} {{ _id, <its shard key read> }}"),
                    &with_id,
                );
            }
            out.add(
                format!("{moved}: the inverse {}.{inverse}", r.to),
                r.to,
                format!("update {} {{ _id: <old/new target> }}", r.to),
                &["_id"],
            );
        }
    }
}

/// Deleting its documents: each rule of the references to it, and the summaries of them held
/// elsewhere.
pub(super) fn deletes(out: &mut Routes<'_>) {
    let (c, model) = (out.c, out.model.clone());
    for r in out.catalog.references_to(c) {
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
        // A collection nothing else depends on is deleted by the reference alone, as the
        // delete's plan decides; otherwise its ids (and shard key values) are read, then
        // deleted by them.
        if r.on_delete == OnDelete::Cascade
            && crate::relations::deleted_by_reference(out.catalog, r, c)
        {
            out.add(
                format!(
                    "delete of a {model}: cascade on {}.{}, deleted by reference",
                    r.from, r.path
                ),
                r.from,
                format!("delete {} {{ {}: {{ $in: <ids> }} }}", r.from, r.path),
                &[r.path.as_str()],
            );
            continue;
        }
        out.add(
            format!("delete of a {model}: {rule} on {}.{}", r.from, r.path),
            r.from,
            format!("{verb} {} {{ {}: {{ $in: <ids> }} }}", r.from, r.path),
            &[r.path.as_str()],
        );
        if r.on_delete == OnDelete::Cascade {
            let mut named = vec!["_id"];
            named.extend(
                out.catalog
                    .shard_key_of(r.from)
                    .map(|k| k.names())
                    .unwrap_or_default(),
            );
            out.add(
                    format!("delete of a {model}: cascade on {}.{}, deleted by the ids read", r.from, r.path),
                    r.from,
                    format!("delete {} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}", r.from),
                    &named,
                );
        }
    }
    // Deleting its documents: the summaries of them held elsewhere are pulled, once the
    // delete is visible.
    for copy in out.catalog.copies_from(c) {
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
