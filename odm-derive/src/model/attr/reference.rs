//! `#[reference(...)]` and `#[parent(...)]`.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::{Attribute, LitStr};

use super::{key_name, parse_bound_key, set_flag, skip_value, string_value, Bound, BoundKey};
use crate::ctxt::Ctxt;

/// What deleting a referenced document does to the referencing ones.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OnDelete {
    Restrict,
    Nullify,
    Pull,
    Cascade,
}

pub const ON_DELETE_VALUES: &str = "\"restrict\", \"nullify\", \"pull\", \"cascade\"";

/// `#[reference(...)]` or `#[parent(...)]` on a field.
pub struct ReferenceAttr {
    /// The whole attribute, where errors about it point.
    pub tokens: TokenStream,
    /// `#[parent]` rather than `#[reference]`.
    pub parent: bool,
    pub many: Option<Span>,
    /// `poly`: the field holds polymorphic references (an enum deriving `PolyRef`).
    pub poly: Option<Span>,
    pub bound: Bound,
    pub inverse: Option<LitStr>,
    pub on_delete: Option<(OnDelete, Span)>,
    /// `on_soft_delete = "mark"` (true) or `"leave"`: what a soft delete of the referenced
    /// document does to this one, and where the value is.
    pub on_soft_delete: Option<(bool, Span)>,
    /// An option was already reported as wrong (unknown key, bad value): the rules about what
    /// the attribute lacks, and about the field's type, are not checked.
    pub malformed: bool,
}

pub(super) const REFERENCE_KEYS: &str =
    "`many`, `poly`, `max`, `allow_large`, `inverse`, `on_delete`, `on_soft_delete`";
pub(super) const PARENT_KEYS: &str = "`inverse`, `on_delete`, `on_soft_delete`";

impl ReferenceAttr {
    pub(super) fn parse(cx: &Ctxt, attr: &Attribute, parent: bool) -> Self {
        let mut out = ReferenceAttr {
            tokens: attr.to_token_stream(),
            parent,
            many: None,
            poly: None,
            bound: Bound::default(),
            inverse: None,
            on_delete: None,
            on_soft_delete: None,
            malformed: false,
        };
        if matches!(attr.meta, syn::Meta::Path(_)) {
            return out;
        }
        let (what, keys) = if parent {
            ("parent", PARENT_KEYS)
        } else {
            ("reference", REFERENCE_KEYS)
        };
        let result = attr.parse_nested_meta(|meta| {
            if parent && ["many", "max", "allow_large"].iter().any(|k| meta.path.is_ident(k)) {
                out.malformed = true;
                cx.error_spanned_by(
                    &meta.path,
                    format!("`{}` is not a `#[parent]` option: a `#[parent]` holds one reference to the parent; an array of references is `#[reference(many, max = N)]`", key_name(&meta)),
                );
                skip_value(&meta)?;
            } else if !parent && meta.path.is_ident("many") {
                set_flag(cx, &mut out.many, &meta, "many")?;
            } else if !parent && meta.path.is_ident("poly") {
                set_flag(cx, &mut out.poly, &meta, "poly")?;
            } else if !parent && (meta.path.is_ident("max") || meta.path.is_ident("allow_large")) {
                if let BoundKey::Invalid = parse_bound_key(cx, &meta, &mut out.bound)? {
                    out.malformed = true;
                }
            } else if meta.path.is_ident("inverse") {
                let lit = string_value(cx, &meta, "inverse", "owner")?;
                if out.inverse.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `inverse`");
                }
                // Only a field name is kept: the generated code turns it into an accessor call.
                out.inverse = lit.filter(|lit| {
                    let name = lit.value();
                    let is_ident = syn::parse_str::<syn::Ident>(&name).is_ok_and(|i| i == name);
                    if !is_ident {
                        cx.error_spanned_by(lit, format!("`inverse` names one field of the referenced model, e.g. `inverse = \"owner\"`; `{name}` is not a field name"));
                    }
                    is_ident
                });
            } else if meta.path.is_ident("on_delete") {
                let lit = string_value(cx, &meta, "on_delete", "restrict")?;
                if let Some(lit) = lit {
                    let rule = match lit.value().as_str() {
                        "restrict" => Some(OnDelete::Restrict),
                        "nullify" => Some(OnDelete::Nullify),
                        "pull" => Some(OnDelete::Pull),
                        "cascade" => Some(OnDelete::Cascade),
                        _ => None,
                    };
                    match rule {
                        Some(rule) => {
                            if out.on_delete.is_some() {
                                cx.error_spanned_by(&meta.path, "duplicate `on_delete`");
                            }
                            out.on_delete = Some((rule, lit.span()));
                        }
                        None => cx.error_spanned_by(
                            &lit,
                            format!("unknown delete rule `{}`, expected one of {ON_DELETE_VALUES}", lit.value()),
                        ),
                    }
                }
            } else if meta.path.is_ident("on_soft_delete") {
                parse_soft_rule(cx, &meta, &mut out)?;
            } else {
                out.malformed = true;
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown {what} option `{}`, expected one of {keys}", key_name(&meta)),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = result {
            out.malformed = true;
            cx.syn_error(e);
        }
        out
    }
}

/// `on_soft_delete = "mark"` or `"leave"` into `out`, reporting a repeated key or another rule.
fn parse_soft_rule(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    out: &mut ReferenceAttr,
) -> syn::Result<()> {
    let Some(lit) = string_value(cx, meta, "on_soft_delete", "mark")? else {
        return Ok(());
    };
    let mark = match lit.value().as_str() {
        "mark" => true,
        "leave" => false,
        other => {
            out.malformed = true;
            cx.error_spanned_by(
                &lit,
                format!("unknown soft delete rule `{other}`, expected \"mark\" (mark this document with the one it references) or \"leave\""),
            );
            return Ok(());
        }
    };
    if out.on_soft_delete.is_some() {
        cx.error_spanned_by(&meta.path, "duplicate `on_soft_delete`");
    } else {
        out.on_soft_delete = Some((mark, lit.span()));
    }
    Ok(())
}
