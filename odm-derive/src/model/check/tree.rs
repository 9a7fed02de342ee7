//! The rules of `#[odm(tree(...))]` about its two fields (parsed in `attr::tree`).

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::LitStr;

use super::super::{Container, Derive, Field, Shape};
use crate::ctxt::Ctxt;

/// The rules of a tree: on a model's struct (not a kind), its two fields exist, are distinct,
/// stored, not the id, an `Option` and a `Vec`, with no attribute of their own.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    let Some(tree) = &cont.tree else { return };
    if cont.derive != Derive::Model {
        return;
    }
    if let Some((_, lit)) = &cont.kind_of {
        cx.error_spanned_by(
            lit,
            "a tree is declared on a model of its own collection; a kind of a polymorphic model cannot be one",
        );
    }
    let mut found = Vec::new();
    for (key, name, lit, shape) in [
        (
            "parent",
            tree.parent_name(),
            &tree.parent,
            "an `Option` (roots have no parent)",
        ),
        (
            "ancestors",
            tree.ancestors_name(),
            &tree.ancestors,
            "a `Vec` (the ancestors, root first)",
        ),
    ] {
        let Some(f) = cont.field_named(&name) else {
            missing_field(cx, cont, tree.span, key, &name, lit.as_ref());
            continue;
        };
        if f.is_id() || f.skipped {
            cx.error_spanned_by(
                f.ident,
                format!("the tree's {key} field is a stored field of its own, not `_id` nor a field serde skips"),
            );
            continue;
        }
        check_field(cx, cont, f, key, shape);
        found.push(f.ident);
    }
    if let [parent, ancestors] = found[..] {
        if parent == ancestors {
            cx.error_at(
                tree.ancestors
                    .as_ref()
                    .map_or_else(|| parent.span(), LitStr::span),
                "the tree's parent and ancestors are two fields",
            );
        }
    }
}

/// The tree's `key` field (`parent` or `ancestors`), named `name`, is not a field of the model.
fn missing_field(
    cx: &Ctxt,
    cont: &Container<'_>,
    tree: Span,
    key: &str,
    name: &str,
    lit: Option<&LitStr>,
) {
    let known: Vec<String> = cont
        .stored_fields()
        .map(|f| f.ident.unraw().to_string())
        .collect();
    let hint = super::closest(name, &known)
        .map(|near| format!("; did you mean `{near}`?"))
        .unwrap_or_default();
    let message = format!(
        "a tree needs its {key} field: `{}` has no field `{name}`{hint} (declare `{}`, or name it with `tree({key} = \"...\")`)",
        cont.ident,
        match key {
            "parent" => format!("{name}: Option<Ref<{}>>", cont.ident),
            _ => format!("{name}: Vec<Ref<{}>>", cont.ident),
        }
    );
    match lit {
        Some(lit) => cx.error_spanned_by(lit, message),
        None => cx.error_at(tree, message),
    }
}

/// The tree's `key` field `f`: its shape (`shape` says which), its target named, and no
/// attribute of its own (the tree keeps and indexes it).
fn check_field(cx: &Ctxt, cont: &Container<'_>, f: &Field<'_>, key: &str, shape: &str) {
    let shape_ok = matches!(
        (key, f.shape),
        ("parent", Shape::Option(_)) | ("ancestors", Shape::Vec(_))
    );
    if !shape_ok {
        cx.error_spanned_by(
            f.ty,
            format!(
                "the tree's {key} field is {shape}: `{}`",
                match key {
                    "parent" => format!("Option<Ref<{}>>", cont.ident),
                    _ => format!("Vec<Ref<{}>>", cont.ident),
                }
            ),
        );
    }
    if let Some(target) = f.ref_target().filter(|t| is_self(t)) {
        cx.error_spanned_by(
            target,
            format!("name the model in the tree's {key} field: `Ref<{}>` (`Self` would mean another type in the code the derive generates)", cont.ident),
        );
    }
    let other = [
        f.reference.as_ref().map(|r| {
            (
                r.tokens.clone(),
                if r.parent {
                    "#[parent]"
                } else {
                    "#[reference]"
                },
            )
        }),
        f.embed.as_ref().map(|e| (e.tokens.clone(), "#[embed]")),
        f.denormalize
            .as_ref()
            .map(|d| (d.tokens.clone(), "#[denormalize]")),
        f.index.as_ref().map(|i| (i.tokens.clone(), "#[index]")),
    ];
    for (tokens, what) in other.into_iter().flatten() {
        cx.error_spanned_by(
            tokens,
            format!(
                "`{}` is the tree's {key} field, kept and indexed by the tree: remove `{what}`",
                f.ident.unraw()
            ),
        );
    }
}

/// `Self`, as a type.
fn is_self(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
}
