//! The class of each model: its collection (or kind), then its stored fields as the validator
//! schema describes them, each with what the catalog says of it (a reference, a copy, a
//! latest-N array, a bound, the tree's fields, the shard key); and the classes of the embedded
//! types the schema describes, each joined to its holder.

use crate::catalog::{CopyKind, FieldSchema, ModelEntry, RefKind, Schema, ShardOrder};

use super::names::{text, Nodes};

/// How many embedded types deep the classes go (a type holding itself stops there too).
const MAX_DEPTH: usize = 8;

/// One line of a class body: a field's name, its type and what the catalog says of it.
#[derive(Default)]
struct Member {
    name: String,
    ty: String,
    notes: Vec<String>,
}

impl Member {
    fn line(&self) -> String {
        // `name: type, note, note`, or `name: note` when the schema does not say the type.
        let mut what: Vec<&str> = vec![&self.ty];
        what.retain(|ty| !ty.is_empty());
        what.extend(self.notes.iter().map(String::as_str));
        format!("{}: {}", text(&self.name), what.join(", "))
    }
}

/// What the diagram draws of the models: their classes, those of the embedded types, and the
/// edges from each holder to its embedded types.
#[derive(Default)]
pub(super) struct Classes {
    pub(super) classes: Vec<String>,
    pub(super) embedded: Vec<String>,
}

impl Classes {
    /// Adds the class of the model `entry` (id `id`) and those of its embedded types.
    pub(super) fn model(&mut self, nodes: &Nodes<'_>, entry: &'static ModelEntry, id: &str) {
        let mut members = schema_members(entry.validator);
        for member in &mut members {
            // The model's bounds are the catalog's (`annotate`); the schema's would repeat them.
            member.notes.clear();
        }
        annotate(nodes, entry, &mut members);
        let mut lines = vec![annotation(entry)];
        lines.extend(members.iter().map(Member::line));
        self.class(id, Some(entry.type_name), &lines);
        if let Some(Schema::Object(fields)) = entry.validator.map(resolve) {
            let refs = summary_references(nodes, entry);
            self.embedded_in(id, entry.type_name, "", fields, &refs, &mut Vec::new());
        }
    }

    /// Adds the class of a collection outside the catalog.
    pub(super) fn outside(&mut self, id: &str, collection: &str) {
        let note = format!("<<collection {}, outside the catalog>>", text(collection));
        self.class(id, Some(collection), &[note]);
    }

    fn class(&mut self, id: &str, label: Option<&str>, lines: &[String]) {
        let mut class = format!("  class {id}");
        if let Some(label) = label.filter(|l| *l != id) {
            class.push_str(&format!("[\"{}\"]", text(label)));
        }
        class.push_str(" {\n");
        for line in lines {
            class.push_str(&format!("    {line}\n"));
        }
        class.push_str("  }\n");
        self.classes.push(class);
    }

    /// The classes of the embedded types among `fields` (the fields of the type `label`, whose
    /// node is `holder`, stored at `path` in the model), joined to it; `refs` are the
    /// references held inside them, by stored path, and `open` the schemas being described.
    fn embedded_in(
        &mut self,
        holder: &str,
        label: &str,
        path: &str,
        fields: &[FieldSchema],
        refs: &[(String, String)],
        open: &mut Vec<fn() -> &'static Schema>,
    ) {
        if open.len() >= MAX_DEPTH {
            return;
        }
        for field in fields {
            let Some(Embedded {
                of,
                cardinality,
                fields: object,
            }) = field.schema.and_then(|s| embedded(s, field))
            else {
                continue;
            };
            if of.is_some_and(|f| open.iter().any(|o| std::ptr::fn_addr_eq(*o, f))) {
                continue;
            }
            let id = format!("{holder}__{}", super::names::ident(field.name));
            let name = format!("{label}.{}", field.name);
            let here = join(path, field.name);
            let mut lines = vec!["<<embedded>>".to_owned()];
            lines.extend(object.iter().map(|f| {
                let mut member = field_member(f);
                let stored = join(&here, f.name);
                if let Some((_, ty)) = refs.iter().find(|(p, _)| *p == stored) {
                    member.ty.clone_from(ty);
                }
                member.line()
            }));
            self.class(&id, Some(&name), &lines);
            self.embedded.push(format!(
                "  {holder} *-- \"{cardinality}\" {id} : {}\n",
                text(field.name)
            ));
            open.extend(of);
            self.embedded_in(&id, &name, &here, object, refs, open);
            if of.is_some() {
                open.pop();
            }
        }
    }
}

/// The references held in the model's summaries, by stored path (`parts.id`), each with its
/// type as a member shows it (`Ref~Part~`): what the schema alone would draw as the id's type.
fn summary_references(nodes: &Nodes<'_>, entry: &ModelEntry) -> Vec<(String, String)> {
    (entry.copies)()
        .iter()
        .filter_map(|c| {
            let (id, _, _) = c.summary_reference()?;
            let target = nodes.of_collection(c.source, c.source_kind);
            let target = text(nodes.label(&target).unwrap_or(c.source));
            Some((join(&c.path, id), format!("Ref~{target}~")))
        })
        .collect()
}

fn join(path: &str, field: &str) -> String {
    match path {
        "" => field.to_owned(),
        _ => format!("{path}.{field}"),
    }
}

/// The first line of a model's class: its collection, and its kind or time series.
fn annotation(entry: &ModelEntry) -> String {
    let mut what = format!("collection {}", text(entry.collection));
    if let Some(kind) = entry.kind {
        what.push_str(&format!(", {} = {}", text(kind.field), text(kind.value)));
    }
    if let Some(kinds) = entry.kinds {
        what.push_str(&format!(", kinds by {}", text(kinds.field)));
    }
    if entry.time_series.is_some() {
        what.push_str(", time series");
    }
    format!("<<{what}>>")
}

/// The schema behind `Of` (one level).
fn resolve(schema: &'static Schema) -> &'static Schema {
    match schema {
        Schema::Of(of) => of(),
        other => other,
    }
}

/// An embedded type a field holds.
struct Embedded {
    /// The function reaching its schema, if any (to stop where a type holds itself).
    of: Option<fn() -> &'static Schema>,
    /// How many the holder's field holds: `1`, `0..1`, `*`, `0..N`.
    cardinality: String,
    /// The type's fields.
    fields: &'static [FieldSchema],
}

/// The embedded type `schema` (of `field`) holds, if any.
fn embedded(schema: &'static Schema, field: &FieldSchema) -> Option<Embedded> {
    let (inner, cardinality) = match schema {
        Schema::Nullable(inner) => (*inner, "0..1".to_owned()),
        Schema::Array(inner) => (
            *inner,
            field.max_items.map_or("*".into(), |m| format!("0..{m}")),
        ),
        Schema::Map(inner) => (*inner, "*".to_owned()),
        other => (other, "1".to_owned()),
    };
    let of = match inner {
        Schema::Of(of) => Some(*of),
        _ => None,
    };
    match resolve(inner) {
        Schema::Object(fields) => Some(Embedded {
            of,
            cardinality,
            fields,
        }),
        _ => None,
    }
}

/// The members of a schema's fields (none when the model has no object schema).
fn schema_members(schema: Option<&'static Schema>) -> Vec<Member> {
    match schema.map(resolve) {
        Some(Schema::Object(fields)) => fields.iter().map(field_member).collect(),
        _ => Vec::new(),
    }
}

fn field_member(field: &FieldSchema) -> Member {
    let mut ty = field.schema.map_or("any".to_owned(), type_name);
    if !field.required && !ty.ends_with('?') {
        ty.push('?');
    }
    Member {
        name: field.name.to_owned(),
        ty,
        notes: field
            .max_items
            .map(|m| format!("max {m}"))
            .into_iter()
            .collect(),
    }
}

/// A schema's type, shortly: `string`, `objectId[]`, `int?`, `object`.
fn type_name(schema: &'static Schema) -> String {
    match schema {
        Schema::Types(names) => names
            .iter()
            .map(|n| text(n))
            .collect::<Vec<_>>()
            .join(" or "),
        Schema::Nullable(inner) => format!("{}?", type_name(inner)),
        Schema::Array(items) => format!("{}[]", type_name(items)),
        Schema::Map(values) => format!("map of {}", type_name(values)),
        Schema::Object(_) | Schema::Of(_) => "object".to_owned(),
        Schema::WholeNumber { .. } => "int".to_owned(),
        Schema::Custom(_) => "any".to_owned(),
    }
}

/// The member of `path` in `members`, added at the end when the schema has none.
fn member<'m>(members: &'m mut Vec<Member>, path: &str) -> &'m mut Member {
    let at = members
        .iter()
        .position(|m| m.name == path)
        .unwrap_or_else(|| {
            members.push(Member {
                name: path.to_owned(),
                ..Member::default()
            });
            members.len() - 1
        });
    &mut members[at]
}

/// Adds to `members` what the catalog says of the model's fields.
fn annotate(nodes: &Nodes<'_>, entry: &ModelEntry, members: &mut Vec<Member>) {
    for r in (entry.references)() {
        let target = nodes.of_collection(r.to, None);
        let target = text(nodes.label(&target).unwrap_or(r.to));
        member(members, &r.path).ty = match r.kind {
            RefKind::One => format!("Ref~{target}~"),
            RefKind::Optional => format!("Ref~{target}~?"),
            RefKind::Many => format!("Ref~{target}~[]"),
        };
    }
    for c in (entry.copies)() {
        let note = match c.kind {
            CopyKind::Summary { .. } => "summary copy".to_owned(),
            CopyKind::Flat { .. } => "copy".to_owned(),
            CopyKind::Latest { n, .. } => format!("latest {n}"),
        };
        member(members, &c.path).notes.push(note);
    }
    for (path, bound) in (entry.bounds)() {
        member(members, path).notes.push(format!("max {bound}"));
    }
    if let Some(tree) = entry.tree {
        member(members, tree.parent)
            .notes
            .push("tree parent".into());
        member(members, tree.ancestors)
            .notes
            .push("tree ancestors".into());
    }
    if let Some(key) = entry.shard_key {
        for (i, (field, order)) in key.fields.iter().enumerate() {
            let hashed = if *order == ShardOrder::Hashed {
                " hashed"
            } else {
                ""
            };
            let note = format!("shard key {}{hashed}", i + 1);
            member(members, field).notes.push(note);
        }
    }
    if let Some(field) = entry.soft_delete {
        member(members, field).notes.push("soft delete".into());
    }
    indexes(entry, members);
}

/// Adds what the declared indexes say where it matters to a reader of the schema: a unique
/// value (of one field, or of several together, named on the first), how its strings compare,
/// a geospatial key. A unique index of a soft-deleting model ends with the soft delete's field
/// (unique among the live documents); that key is not shown as one of the values.
fn indexes(entry: &ModelEntry, members: &mut Vec<Member>) {
    for spec in (entry.indexes)() {
        let keys: Vec<&str> = spec
            .keys()
            .iter()
            .map(|(p, _)| p.as_str())
            .filter(|p| Some(*p) != entry.soft_delete || !spec.is_unique())
            .collect();
        let Some(first) = keys.first() else { continue };
        let collation = spec.collation.as_ref().map(|c| {
            let locale = c.get_str("locale").unwrap_or("simple");
            match c.get_i32("strength") {
                Ok(1 | 2) => format!("{locale} without case"),
                Ok(n) => format!("{locale} at strength {n}"),
                Err(_) => locale.to_owned(),
            }
        });
        let mut note = match (spec.is_unique(), keys.len()) {
            (true, 1) => "unique".to_owned(),
            (true, _) => format!("unique with {}", keys[1..].join(", ")),
            (false, _) => String::new(),
        };
        if let Some(collation) = collation {
            note = match note.is_empty() {
                true => format!("compared in {collation}"),
                false => format!("{note} in {collation}"),
            };
        }
        if !note.is_empty() {
            member(members, first).notes.push(text(&note));
        }
        for (path, key) in spec.keys() {
            if *key == crate::catalog::IndexKey::Sphere {
                member(members, path).notes.push("2dsphere".into());
            }
        }
    }
}
