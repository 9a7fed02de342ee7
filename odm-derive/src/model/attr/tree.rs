//! Parsing `#[odm(tree(...))]`: the model is a tree of documents, each naming its parent and
//! listing its ancestors (the rules about the two fields are in `check::tree`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::LitStr;

use super::{is_field_name, key_name, skip_value, string_value};
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
