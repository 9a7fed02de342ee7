//! A tree model's two fields as the other rules and the expansion ask for them
//! (`#[odm(tree(...))]`: parsed in `attr::tree`, checked in `check::tree`).

use syn::ext::IdentExt;

use super::{Container, Field};

/// The tree's parent and ancestors fields, when the struct has them.
pub fn tree_fields<'c, 'a>(cont: &'c Container<'a>) -> Option<(&'c Field<'a>, &'c Field<'a>)> {
    let tree = cont.tree.as_ref()?;
    Some((
        cont.field_named(&tree.parent_name())?,
        cont.field_named(&tree.ancestors_name())?,
    ))
}

/// Whether `f` is the tree's parent or ancestors field (kept by the ODM), also when the other
/// one is missing.
pub fn is_tree_field(cont: &Container<'_>, f: &Field<'_>) -> bool {
    cont.tree.as_ref().is_some_and(|t| {
        let name = f.ident.unraw();
        name == t.parent_name() || name == t.ancestors_name()
    })
}

/// Whether the rule that a `Ref` field needs `#[reference]` leaves `f` to the tree: a tree
/// field, or any field while one of the tree's fields is missing (that error asks for it, and
/// the `Ref` field is most likely the one meant).
pub fn ref_rule_exempt(cont: &Container<'_>, f: &Field<'_>) -> bool {
    is_tree_field(cont, f) || (cont.tree.is_some() && tree_fields(cont).is_none())
}
