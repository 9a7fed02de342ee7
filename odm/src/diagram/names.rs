//! The names a diagram gives: one Mermaid id per model (its type name made safe, and unique
//! within the catalog), the node each reference or copy points at, and the escaping of every
//! name shown, so that no type, collection or path can be read by Mermaid as syntax.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::ModelEntry;
use crate::kind::Kind;

/// The words of Mermaid's class diagrams that an id may not be.
const RESERVED: &[&str] = &[
    "class",
    "classdiagram",
    "classdef",
    "click",
    "callback",
    "cssclass",
    "direction",
    "end",
    "link",
    "namespace",
    "note",
    "style",
];

/// The models of a catalog as the nodes of its diagram, and the collections outside it that
/// its references or copies name.
pub(super) struct Nodes<'a> {
    models: &'a [&'static ModelEntry],
    ids: Vec<String>,
    /// Collections named by a reference or a copy but declared by none of the models: `(id,
    /// collection)`.
    outside: RefCell<BTreeMap<String, String>>,
}

impl<'a> Nodes<'a> {
    /// The nodes of `models` (a catalog's, sorted): each model's id is its type name, made
    /// safe; where two models share it, followed by their collection.
    pub(super) fn new(models: &'a [&'static ModelEntry]) -> Self {
        let bases: Vec<String> = models.iter().map(|m| ident(m.type_name)).collect();
        let mut taken = BTreeSet::new();
        let ids = models
            .iter()
            .zip(&bases)
            .map(|(m, base)| {
                let shared = bases.iter().filter(|b| *b == base).count() > 1;
                let id = if shared {
                    format!("{base}_{}", ident(m.collection))
                } else {
                    base.clone()
                };
                unique(id, &mut taken)
            })
            .collect();
        Nodes {
            models,
            ids,
            outside: RefCell::default(),
        }
    }

    /// The models, in the catalog's order, each with its id.
    pub(super) fn models(&self) -> impl Iterator<Item = (&'static ModelEntry, &str)> + '_ {
        self.models
            .iter()
            .copied()
            .zip(self.ids.iter().map(String::as_str))
    }

    /// The id of the model named `type_name` stored in `collection`.
    pub(super) fn of_type(&self, type_name: &str, collection: &str) -> Option<&str> {
        self.models()
            .find(|(m, _)| m.type_name == type_name && m.collection == collection)
            .map(|(_, id)| id)
    }

    /// The id of the main model of a subset pair, `type_name`.
    pub(super) fn named(&self, type_name: &str) -> Option<&str> {
        self.models()
            .find(|(m, _)| m.type_name == type_name)
            .map(|(_, id)| id)
    }

    /// The id of the node standing for the documents of `collection` (of the kind `kind`, when
    /// given): the kind's model, else the enum of kinds stored there, else the first model
    /// stored there, else a node for a collection outside the catalog.
    pub(super) fn of_collection(&self, collection: &str, kind: Option<Kind>) -> String {
        let here = || self.models().filter(|(m, _)| m.collection == collection);
        let found = kind
            .and_then(|k| here().find(|(m, _)| m.kind == Some(k)))
            .or_else(|| here().find(|(m, _)| m.kinds.is_some()))
            .or_else(|| here().find(|(m, _)| m.kind.is_none()))
            .or_else(|| here().next());
        if let Some((_, id)) = found {
            return id.to_owned();
        }
        let id = format!("collection_{}", ident(collection));
        self.outside
            .borrow_mut()
            .insert(id.clone(), collection.to_owned());
        id
    }

    /// The collections outside the catalog that edges point at, `(id, collection)`, sorted.
    pub(super) fn outside(&self) -> Vec<(String, String)> {
        self.outside.borrow().clone().into_iter().collect()
    }

    /// What a node is called on the diagram: the model's type name (its id may differ).
    pub(super) fn label(&self, id: &str) -> Option<&'static str> {
        self.models()
            .find(|(_, i)| *i == id)
            .map(|(m, _)| m.type_name)
    }
}

/// `name` as a Mermaid id: ASCII letters, digits and `_`, not starting with a digit, and not a
/// word of the diagram's syntax.
pub(super) fn ident(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert_str(0, "m_");
    }
    if RESERVED.contains(&id.to_ascii_lowercase().as_str()) {
        id.push('_');
    }
    id
}

/// `id`, or `id_2`, `id_3`... when taken; recorded as taken.
fn unique(id: String, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = id.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{id}_{n}");
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

/// `name` as text Mermaid shows verbatim: letters, digits, spaces, `_` and `.` as they are,
/// any other character as its entity code (`#60;` for `<`), which Mermaid decodes when it
/// draws, so that a name cannot close a label, open a class body or end a line.
pub(super) fn text(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_alphanumeric() || matches!(c, ' ' | '_' | '.') {
            out.push(c);
        } else {
            out.push_str(&format!("#{};", u32::from(c)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_safe_and_texts_are_escaped() {
        assert_eq!(ident("Part"), "Part");
        assert_eq!(ident("Wrapper<T>"), "Wrapper_T_");
        assert_eq!(ident("9lives"), "m_9lives");
        assert_eq!(ident("end"), "end_");
        assert_eq!(ident(""), "m_");
        assert_eq!(text("a.b c_d"), "a.b c_d");
        assert_eq!(text("x\"]{;}\n#"), "x#34;#93;#123;#59;#125;#10;#35;");
    }
}
