//! The edges between the models: each kind to its enum of kinds, each reference to its target
//! (the one a summary holds too) with its cardinality and delete rule, each tree to itself,
//! each copy from its source to the model holding it with its cascade mode, and each subset to
//! its main model.

use bson::Bson;

use crate::catalog::{Catalog, CopyInfo, CopyKind, DeleteRule, OnDelete, RefKind, ReferenceInfo};

use super::names::{text, Nodes};

/// The edges of the diagram, by what they show, each group sorted.
#[derive(Default)]
pub(super) struct Edges {
    pub(super) kinds: Vec<String>,
    pub(super) references: Vec<String>,
    pub(super) trees: Vec<String>,
    pub(super) copies: Vec<String>,
    pub(super) subsets: Vec<String>,
}

impl Edges {
    /// The edges of `catalog`'s models.
    pub(super) fn of(catalog: &Catalog, nodes: &Nodes<'_>) -> Self {
        let mut edges = Edges::default();
        for (entry, id) in nodes.models() {
            if let Some(kind) = entry.kind {
                let base = nodes.of_collection(entry.collection, None);
                if base != id {
                    let label = format!("{} = {}", text(kind.field), text(kind.value));
                    edges.kinds.push(format!("  {base} <|-- {id} : {label}\n"));
                }
            }
            for r in (entry.references)() {
                edges.references.push(reference(nodes, id, &r));
            }
            if let Some(tree) = entry.tree {
                let rule = match tree.on_delete {
                    DeleteRule::Restrict => "restrict",
                    DeleteRule::Cascade => "cascade",
                    DeleteRule::Lift => "lift",
                };
                let label = format!(
                    "tree {} and {}, on delete {rule}",
                    text(tree.parent),
                    text(tree.ancestors)
                );
                edges
                    .trees
                    .push(format!("  {id} --> \"0..1\" {id} : {label}\n"));
            }
            if let Some(main) = entry.subset_of.and_then(|m| nodes.named(m)) {
                edges
                    .subsets
                    .push(format!("  {main} -- {id} : subset, same _id\n"));
            }
        }
        for c in catalog.copies() {
            edges.copies.push(copy(nodes, c));
            // A summary holds a reference to its source: drawn as the references are.
            edges.references.extend(summary(nodes, c));
        }
        for group in edges.groups_mut() {
            group.sort();
            group.dedup();
        }
        edges
    }

    fn groups_mut(&mut self) -> [&mut Vec<String>; 5] {
        [
            &mut self.kinds,
            &mut self.references,
            &mut self.trees,
            &mut self.copies,
            &mut self.subsets,
        ]
    }

    /// The groups, each with the comment that heads it.
    pub(super) fn groups(&self) -> [(&'static str, &[String]); 5] {
        [
            ("kinds of an enum of kinds", &self.kinds),
            ("references, with their delete rules", &self.references),
            ("trees", &self.trees),
            ("copies, from the source to the copy", &self.copies),
            ("subsets", &self.subsets),
        ]
    }
}

/// `Product --> "0..4" Part : parts, on delete pull`: from the holder, to what it references,
/// with how many it holds.
fn reference(nodes: &Nodes<'_>, from: &str, r: &ReferenceInfo) -> String {
    let to = nodes.of_collection(r.to, None);
    let mut label = format!("{}, on delete {}", text(&r.path), rule(r.on_delete));
    if r.parent {
        label.push_str(", parent");
    }
    if let Some(inverse) = &r.inverse {
        label.push_str(&format!(", two-way with {}", text(inverse)));
    }
    if r.dbref.is_some() {
        label.push_str(", DBRef");
    }
    if r.on_soft_delete == crate::catalog::OnSoftDelete::Mark {
        label.push_str(", marked on soft delete");
    }
    let cardinality = cardinality(r.kind, r.max);
    format!("  {from} --> \"{cardinality}\" {to} : {label}\n")
}

/// `Product --> "0..4" Part : parts.id, on delete pull, summary`: the reference a summary
/// holds to its source, from the model holding it, with how many it holds (an array's bound)
/// and what deleting the source does to the summary, as the delete rules apply it.
fn summary(nodes: &Nodes<'_>, c: &CopyInfo) -> Option<String> {
    let (id, kind, on_delete) = c.summary_reference()?;
    let from = holder(nodes, c);
    let to = nodes.of_collection(c.source, c.source_kind);
    let max = nodes
        .models()
        .find(|(_, i)| *i == from)
        .and_then(|(m, _)| (m.bounds)().iter().find(|(p, _)| *p == c.path))
        .map(|(_, n)| *n);
    let label = format!(
        "{}.{}, on delete {}, summary",
        text(&c.path),
        text(id),
        rule(on_delete)
    );
    let cardinality = cardinality(kind, max);
    Some(format!("  {from} --> \"{cardinality}\" {to} : {label}\n"))
}

/// How many targets a reference holds: `1`, `0..1`, `0..N` for an array bounded at N, `*`.
fn cardinality(kind: RefKind, max: Option<u32>) -> String {
    match (kind, max) {
        (RefKind::One, _) => "1".to_owned(),
        (RefKind::Optional, _) => "0..1".to_owned(),
        (RefKind::Many, Some(max)) => format!("0..{max}"),
        (RefKind::Many, None) => "*".to_owned(),
    }
}

fn rule(on_delete: OnDelete) -> &'static str {
    match on_delete {
        OnDelete::Restrict => "restrict",
        OnDelete::Nullify => "nullify",
        OnDelete::Pull => "pull",
        OnDelete::Cascade => "cascade",
    }
}

/// The node of the model holding the copy `c`.
fn holder(nodes: &Nodes<'_>, c: &CopyInfo) -> String {
    nodes.of_type(c.dependent_type, c.dependent).map_or_else(
        || nodes.of_collection(c.dependent, c.dependent_kind),
        str::to_owned,
    )
}

/// `Part ..> Product : copy name, price → parts[], in request`: from the source to the model
/// holding the copy, with the fields copied and when the copies are updated.
fn copy(nodes: &Nodes<'_>, c: &CopyInfo) -> String {
    let source = nodes.of_collection(c.source, c.source_kind);
    let holder = holder(nodes, c);
    let fields: Vec<String> = c.fields.iter().map(|(from, _)| text(from)).collect();
    let fields = fields.join(", ");
    let what = match &c.kind {
        CopyKind::Summary { array: true, .. } => format!("copy {fields} → {}[]", text(&c.path)),
        CopyKind::Summary { .. } => format!("copy {fields} → {}", text(&c.path)),
        CopyKind::Flat { via } => {
            format!("copy {fields} → {} via {}", text(&c.path), text(via))
        }
        CopyKind::Latest { n, sort, .. } => {
            let order: Vec<String> = sort
                .iter()
                .map(|(k, v)| {
                    let down = matches!(v, Bson::Int32(-1) | Bson::Int64(-1));
                    format!("{} {}", text(k), if down { "desc" } else { "asc" })
                })
                .collect();
            format!(
                "copy {fields} → {}[], latest {n} by {}",
                text(&c.path),
                order.join(", ")
            )
        }
    };
    let mode = if c.background {
        "background"
    } else {
        "in request"
    };
    format!("  {source} ..> {holder} : {what}, {mode}\n")
}
