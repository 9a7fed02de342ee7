//! `#[odm(tree(...))]`: the model is a tree of documents, each naming its parent and listing
//! its ancestors. Parsing and the rules about the two fields.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::LitStr;

use super::syntax::{is_field_name, key_name, skip_value, string_value};
use super::{Container, Derive, Field, Shape};
use crate::ctxt::Ctxt;

const TREE_KEYS: &str = "`parent`, `ancestors`, `on_delete`";
const TREE_DELETE_VALUES: &str = "\"restrict\", \"cascade\", \"lift\"";

/// What deleting a node does to its subtree.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TreeDelete {
    Restrict,
    Cascade,
    Lift,
}

/// `#[odm(tree)]` or `#[odm(tree(parent = "parent", ancestors = "ancestors", on_delete =
/// "lift"))]`.
pub struct TreeAttr {
    /// The `tree` key, where errors about the tree as a whole point.
    pub span: Span,
    pub parent: Option<LitStr>,
    pub ancestors: Option<LitStr>,
    pub on_delete: Option<(TreeDelete, Span)>,
}

impl TreeAttr {
    /// The Rust name of the parent field (`parent` unless named).
    pub fn parent_name(&self) -> String {
        self.parent
            .as_ref()
            .map_or_else(|| "parent".to_owned(), LitStr::value)
    }

    /// The Rust name of the ancestors field (`ancestors` unless named).
    pub fn ancestors_name(&self) -> String {
        self.ancestors
            .as_ref()
            .map_or_else(|| "ancestors".to_owned(), LitStr::value)
    }

    /// Parses the `tree` key of `#[odm(...)]`, reporting a repeated one.
    pub fn parse(
        cx: &Ctxt,
        meta: &ParseNestedMeta<'_>,
        slot: &mut Option<TreeAttr>,
    ) -> syn::Result<()> {
        let mut out = TreeAttr {
            span: meta.path.span(),
            parent: None,
            ancestors: None,
            on_delete: None,
        };
        if meta.input.peek(syn::Token![=]) {
            cx.error_spanned_by(
                &meta.path,
                "expected `tree` or `tree(parent = \"parent\", ancestors = \"ancestors\", on_delete = \"restrict\")`",
            );
            skip_value(meta)?;
        } else if meta.input.peek(syn::token::Paren) {
            meta.parse_nested_meta(|inner| {
                let name = |lit: Option<LitStr>, key: &str| {
                    lit.filter(|lit| {
                        let ok = is_field_name(&lit.value());
                        if !ok {
                            cx.error_spanned_by(lit, format!("`{key}` names one field of this struct: `{key} = \"{key}\"`"));
                        }
                        ok
                    })
                };
                if inner.path.is_ident("parent") {
                    let lit = string_value(cx, &inner, "parent", "parent")?;
                    if out.parent.is_some() {
                        cx.error_spanned_by(&inner.path, "duplicate `parent`");
                    }
                    out.parent = name(lit, "parent");
                } else if inner.path.is_ident("ancestors") {
                    let lit = string_value(cx, &inner, "ancestors", "ancestors")?;
                    if out.ancestors.is_some() {
                        cx.error_spanned_by(&inner.path, "duplicate `ancestors`");
                    }
                    out.ancestors = name(lit, "ancestors");
                } else if inner.path.is_ident("on_delete") {
                    if let Some(lit) = string_value(cx, &inner, "on_delete", "restrict")? {
                        let rule = match lit.value().as_str() {
                            "restrict" => Some(TreeDelete::Restrict),
                            "cascade" => Some(TreeDelete::Cascade),
                            "lift" => Some(TreeDelete::Lift),
                            _ => None,
                        };
                        match rule {
                            Some(rule) => {
                                if out.on_delete.is_some() {
                                    cx.error_spanned_by(&inner.path, "duplicate `on_delete`");
                                }
                                out.on_delete = Some((rule, lit.span()));
                            }
                            None => cx.error_spanned_by(
                                &lit,
                                format!("unknown delete rule of a tree `{}`, expected one of {TREE_DELETE_VALUES} (what deleting a node does to the nodes below it)", lit.value()),
                            ),
                        }
                    }
                } else {
                    cx.error_spanned_by(
                        &inner.path,
                        format!("unknown tree option `{}`, expected one of {TREE_KEYS}", key_name(&inner)),
                    );
                    skip_value(&inner)?;
                }
                Ok(())
            })?;
        }
        if slot.is_some() {
            cx.error_at(out.span, "duplicate odm attribute `tree`");
        } else {
            *slot = Some(out);
        }
        Ok(())
    }
}

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
    let hint = super::syntax::closest(name, &known)
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
