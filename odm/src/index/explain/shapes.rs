//! The query shapes odm generates for a catalog's models, read from their descriptions: the
//! filters of populate, children, copies, delete rules, trees and subset pairs, with a
//! placeholder where a run puts its ids.

use bson::{doc, Bson, Document};

use super::{QueryFeature, QueryShape, ShapeCommand, ShapeSource};
use crate::catalog::{Catalog, CopyKind, DeleteRule, OnDelete, ReferenceInfo};

/// Where a run puts its values: replaced by a value of the right type before sending, shown as
/// `?`. A value the filters take as they would take an id (`{path: value}`, never
/// `{path: {$eq: value}}`), and never part of a filter odm sends otherwise.
const SLOT: Bson = Bson::Timestamp(bson::Timestamp {
    time: u32::MAX,
    increment: u32::MAX,
});

/// The shapes as they are gathered: one per distinct command, filter and sort, with every
/// feature that sends it.
struct Shapes<'a> {
    catalog: &'a Catalog,
    out: Vec<QueryShape>,
}

impl Shapes<'_> {
    /// Adds the shape of `command` on `collection` with `filter` (and `sort`), whose slots take
    /// ids of `ids_of`'s documents, sent by `source`.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        feature: QueryFeature,
        model: &str,
        what: String,
        collection: &str,
        command: ShapeCommand,
        filter: Document,
        sort: Option<Document>,
        ids_of: &str,
    ) {
        let source = ShapeSource {
            feature,
            model: model.to_owned(),
            what,
        };
        let shape = show(&filter);
        let shape = match &sort {
            Some(sort) => format!("{shape} sorted by {}", show(sort)),
            None => shape,
        };
        if let Some(same) = self
            .out
            .iter_mut()
            .find(|s| s.collection == collection && s.command == command && s.shape == shape)
        {
            if !same.sources.contains(&source) {
                same.sources.push(source);
            }
            return;
        }
        let value = id_placeholder(self.catalog, ids_of);
        self.out.push(QueryShape {
            collection: collection.to_owned(),
            command,
            filter: fill(filter, &value),
            sort,
            shape,
            sources: vec![source],
        });
    }

    /// The type name of a model of `collection` (the collection's name when none is in the
    /// catalog).
    fn model_of(&self, collection: &str) -> String {
        self.catalog
            .models()
            .iter()
            .find(|m| m.collection == collection)
            .map_or(collection, |m| m.type_name)
            .to_owned()
    }
}

/// The query shapes odm generates for the models of `catalog` on the database named
/// `database` (which the filters of references stored as DBRefs name), sorted by collection
/// and shape; the same filter sent by several features is one shape listing them all. Sends
/// nothing.
///
/// The shapes: populate and the fill of copies (`{_id: {$in: [?]}}` on the target or the
/// source), the children of a parent (`#[parent]`), the latest-N arrays (the push onto the
/// parent by `_id`, the recompute from the children by their reference, sorted), the cascades
/// of copies (`update` on the copy's id path), the delete rules (on every referencing
/// collection), the trees (children, roots, descendants, a move, a lift) and the details of
/// subset pairs.
pub fn query_shapes(catalog: &Catalog, database: &str) -> Vec<QueryShape> {
    let mut shapes = Shapes {
        catalog,
        out: Vec::new(),
    };
    for entry in catalog.models() {
        for r in (entry.references)() {
            references(&mut shapes, &r, database);
        }
        if let Some(tree) = entry.tree {
            trees(&mut shapes, entry.type_name, entry.collection, tree);
        }
        if let Some(main) = entry.subset_of {
            shapes.add(
                QueryFeature::Subset,
                main,
                format!("details of {main}s in {}", entry.collection),
                entry.collection,
                ShapeCommand::Find,
                crate::literal::is_in("_id", vec![SLOT]),
                None,
                entry.collection,
            );
        }
    }
    for copy in catalog.copies() {
        copies(&mut shapes, copy);
    }
    let mut out = shapes.out;
    out.sort_by(|a, b| (&a.collection, &a.shape).cmp(&(&b.collection, &b.shape)));
    out
}

/// A reference: populate on its target, the children of a parent, and the target's delete
/// rule on its holders.
fn references(shapes: &mut Shapes<'_>, r: &ReferenceInfo, database: &str) {
    let (from, path) = (r.from_type, &r.path);
    shapes.add(
        QueryFeature::Populate,
        from,
        format!("populate of {from}.{path}"),
        r.to,
        ShapeCommand::Find,
        crate::literal::is_in("_id", vec![SLOT]),
        None,
        r.to,
    );
    let holders = holders_filter(r, database);
    let target = shapes.model_of(r.to);
    if r.parent {
        shapes.add(
            QueryFeature::Children,
            from,
            format!("children of {target}s through {from}.{path}"),
            r.from,
            ShapeCommand::Find,
            holders.clone(),
            None,
            r.to,
        );
    }
    let (rule, command) = match r.on_delete {
        OnDelete::Restrict => ("restrict (a count)", ShapeCommand::Find),
        OnDelete::Nullify => ("nullify", ShapeCommand::Update),
        OnDelete::Pull => ("pull", ShapeCommand::Update),
        OnDelete::Cascade => ("cascade", ShapeCommand::Find),
    };
    shapes.add(
        QueryFeature::DeleteRule,
        &target,
        format!("delete of a {target}: {rule} on {from}.{path}"),
        r.from,
        command,
        holders,
        None,
        r.to,
    );
}

/// The documents holding a reference to one of the ids, as the delete rules find them: the
/// path's `$in`, or for a DBRef its `$ref`, `$id` and `$db`; restricted to the holder's kind.
fn holders_filter(r: &ReferenceInfo, database: &str) -> Document {
    let path = &r.path;
    let filter = match (r.dbref, r.kind) {
        (None, _) => crate::literal::is_in(path, vec![SLOT]),
        (Some(target), crate::catalog::RefKind::Many) => {
            crate::reference::dbref::array_holds(path, target, vec![SLOT], Some(database))
        }
        (Some(target), _) => {
            let mut d = crate::literal::eq(&format!("{path}.$ref"), target.into());
            d.extend(crate::literal::is_in(&format!("{path}.$id"), vec![SLOT]));
            d.extend(crate::literal::is_in(
                &format!("{path}.$db"),
                vec![Bson::Null, database.into()],
            ));
            d
        }
    };
    match r.from_kind {
        Some(kind) => kind.restrict(filter),
        None => filter,
    }
}

/// A copy: its fill from the sources, its cascades, the delete of a source, the latest-N
/// array's push and recompute.
fn copies(shapes: &mut Shapes<'_>, copy: &crate::catalog::CopyInfo) {
    let source = shapes.model_of(copy.source);
    let (dependent, path) = (copy.dependent, &copy.path);
    if let CopyKind::Latest { via, sort, .. } = &copy.kind {
        // The parent, unless it already holds the pushed summaries.
        let mut push = crate::literal::eq("_id", SLOT);
        push.extend(crate::literal::not_in(&format!("{path}._id"), vec![SLOT]));
        shapes.add(
            QueryFeature::Latest,
            &source,
            format!("push of a {source} onto {dependent}.{path} (through `{via}`)"),
            dependent,
            ShapeCommand::Update,
            push,
            None,
            dependent,
        );
        shapes.add(
            QueryFeature::Latest,
            &source,
            format!("recompute of {dependent}.{path} from the latest {source}s"),
            copy.source,
            ShapeCommand::Find,
            crate::literal::is_in(via, vec![SLOT]),
            Some(sort.clone()),
            dependent,
        );
        return;
    }
    let fields: Vec<&str> = copy.fields.iter().map(|(f, _)| f.as_str()).collect();
    shapes.add(
        QueryFeature::Fill,
        copy.dependent_type,
        format!("fill of {dependent}.{path} from {}", copy.source),
        copy.source,
        ShapeCommand::Find,
        crate::literal::is_in("_id", vec![SLOT]),
        None,
        copy.source,
    );
    let by = crate::literal::is_in(&copy.dependents_key(), vec![SLOT]);
    let by = match copy.dependent_kind {
        Some(kind) => kind.restrict(by),
        None => by,
    };
    let how = if copy.background { "background " } else { "" };
    shapes.add(
        QueryFeature::Cascade,
        &source,
        format!(
            "{how}cascade of {source}.{} into {dependent}.{path}",
            fields.join("/")
        ),
        dependent,
        ShapeCommand::Update,
        by.clone(),
        None,
        copy.source,
    );
    if matches!(copy.kind, CopyKind::Summary { .. }) {
        shapes.add(
            QueryFeature::Cascade,
            &source,
            format!("delete of a {source}: its summaries in {dependent}.{path}"),
            dependent,
            ShapeCommand::Update,
            by,
            None,
            copy.source,
        );
    }
}

/// A tree: a node's children (and the restrict rule's count), the roots, the descendants, a
/// move's rewrite of the descendants' ancestors, the lift rule's, and the ancestors read by
/// `_id`.
fn trees(shapes: &mut Shapes<'_>, model: &str, c: &str, tree: crate::catalog::TreeInfo) {
    let (parent, ancestors) = (tree.parent, tree.ancestors);
    let mut add = |what: String, command, filter| {
        shapes.add(QueryFeature::Tree, model, what, c, command, filter, None, c);
    };
    let find = ShapeCommand::Find;
    add(
        format!("children of a {model}"),
        find,
        crate::literal::eq(parent, SLOT),
    );
    add(
        format!("roots of the {model} tree"),
        find,
        crate::literal::eq(parent, Bson::Null),
    );
    add(
        format!("descendants of a {model}"),
        find,
        crate::literal::eq(ancestors, SLOT),
    );
    add(
        format!("ancestors of a {model}"),
        find,
        crate::literal::is_in("_id", vec![SLOT]),
    );
    add(
        format!("move of a {model}'s subtree: the descendants' ancestors"),
        ShapeCommand::Update,
        crate::literal::eq(ancestors, SLOT),
    );
    match tree.on_delete {
        DeleteRule::Restrict => add(
            format!("delete of a {model}: restrict (a count of its children)"),
            find,
            crate::literal::is_in(parent, vec![SLOT]),
        ),
        DeleteRule::Cascade => add(
            format!("delete of a {model}: its subtree"),
            find,
            crate::literal::is_in(ancestors, vec![SLOT]),
        ),
        DeleteRule::Lift => add(
            format!("delete of a {model}: lift (the ancestors below)"),
            ShapeCommand::Update,
            crate::literal::is_in(ancestors, vec![SLOT]),
        ),
    }
}

/// A value of the type of `collection`'s `_id`, as the validator of one of its models declares
/// it; an `ObjectId` when none does (the planner chooses the same index whatever the type).
fn id_placeholder(catalog: &Catalog, collection: &str) -> Bson {
    let declared = catalog
        .models()
        .iter()
        .filter(|m| m.collection == collection)
        .filter_map(|m| m.validator)
        .find_map(|schema| {
            let schema = schema.document();
            let types = schema
                .get_document("properties")
                .ok()?
                .get_document("_id")
                .ok()?
                .get("bsonType")?
                .clone();
            match types {
                Bson::String(t) => Some(t),
                Bson::Array(ts) => ts
                    .iter()
                    .filter_map(Bson::as_str)
                    .find(|t| *t != "null")
                    .map(str::to_owned),
                _ => None,
            }
        });
    match declared.as_deref() {
        Some("string") => Bson::String("?".to_owned()),
        Some("int") => Bson::Int32(0),
        Some("long") => Bson::Int64(0),
        Some("double") => Bson::Double(0.0),
        Some("decimal") => Bson::Decimal128(bson::Decimal128::from_bytes([0; 16])),
        Some("bool") => Bson::Boolean(false),
        Some("date") => Bson::DateTime(bson::DateTime::from_millis(0)),
        Some("object") => Bson::Document(doc! { "?": 0 }),
        _ => Bson::ObjectId(bson::oid::ObjectId::from_bytes([0; 12])),
    }
}

/// `filter` with every slot replaced by `value`.
fn fill(filter: Document, value: &Bson) -> Document {
    filter
        .into_iter()
        .map(|(k, v)| (k, fill_value(v, value)))
        .collect()
}

fn fill_value(v: Bson, value: &Bson) -> Bson {
    match v {
        v if v == SLOT => value.clone(),
        Bson::Document(d) => Bson::Document(fill(d, value)),
        Bson::Array(items) => {
            Bson::Array(items.into_iter().map(|i| fill_value(i, value)).collect())
        }
        other => other,
    }
}

/// A filter as the report shows it: keys unquoted, slots as `?`
/// (`{ parts.id: { $in: [?] } }`).
fn show(filter: &Document) -> String {
    let fields: Vec<String> = filter
        .iter()
        .map(|(k, v)| format!("{k}: {}", show_value(v)))
        .collect();
    if fields.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{ {} }}", fields.join(", "))
    }
}

fn show_value(v: &Bson) -> String {
    match v {
        v if *v == SLOT => "?".to_owned(),
        Bson::Document(d) => show(d),
        Bson::Array(items) => format!(
            "[{}]",
            items.iter().map(show_value).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_shown_as_question_marks_and_filled_with_the_value() {
        let filter = doc! { "parts.id": { "$in": [SLOT] }, "type": "kit" };
        assert_eq!(show(&filter), r#"{ parts.id: { $in: [?] }, type: "kit" }"#);
        assert_eq!(
            fill(filter, &Bson::Int32(0)),
            doc! { "parts.id": { "$in": [0] }, "type": "kit" }
        );
    }
}
