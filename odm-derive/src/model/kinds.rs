//! An enum of kinds (`#[derive(Model)]` on `enum Book { Single(SingleBook), .. }`), resolved:
//! its discriminator field, its kinds and their values, its common fields. Its rules are
//! `check::kinds`; the expansion (`expand::kinds`) reads it and reports nothing.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type};

use super::attr::{self, ContainerAttrs};
use super::Derive;
use crate::ctxt::Ctxt;

/// One variant of the enum.
pub struct Variant<'a> {
    pub ident: &'a Ident,
    /// The kind's struct; `None` for the catch-all.
    pub ty: Option<&'a Type>,
    pub value: String,
    /// Where the value comes from (a `rename` string, else the variant's name).
    pub span: Span,
}

/// The enum of kinds as the expansion reads it.
pub struct EnumOfKinds<'a> {
    pub attrs: ContainerAttrs,
    /// The discriminator field (`#[serde(tag = "...")]`); empty when missing (reported).
    pub tag: String,
    /// Every variant: the kinds, and the catch-all (`ty: None`).
    pub variants: Vec<Variant<'a>>,
    /// `common = "title, isbn"`: the fields every kind has.
    pub common: Vec<(String, Span)>,
}

/// The enum's own attributes (`#[odm(...)]`, `#[serde(tag = ...)]`), parsed.
pub fn attributes(cx: &Ctxt, input: &DeriveInput) -> ContainerAttrs {
    ContainerAttrs::parse(cx, &input.attrs, Derive::Model)
}

/// Resolves the enum whose attributes `attrs` passed their rules, reporting into `cx` what
/// keeps a part of it from resolving (a variant of another shape, a discriminator value given
/// twice, a malformed `common`). Its rules are `check::kinds`.
pub fn resolve<'a>(cx: &Ctxt, input: &'a DeriveInput, attrs: ContainerAttrs) -> EnumOfKinds<'a> {
    let Data::Enum(data) = &input.data else {
        unreachable!("called for enums")
    };
    let tag = attrs
        .serde_tag
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_default();
    let variants = resolve_variants(cx, input, data, &attrs);
    let common = parse_common(cx, attrs.common.as_ref());
    EnumOfKinds {
        attrs,
        tag,
        variants,
        common,
    }
}

/// The variants: each kind with its discriminator value, and the catch-all; a variant of
/// another shape, or a value given twice, is reported.
fn resolve_variants<'a>(
    cx: &Ctxt,
    input: &'a DeriveInput,
    data: &'a syn::DataEnum,
    attrs: &ContainerAttrs,
) -> Vec<Variant<'a>> {
    let mut variants: Vec<Variant<'_>> = Vec::new();
    for v in &data.variants {
        let (rename, other) = variant_serde(v);
        let value = rename.as_ref().map_or_else(
            || match attrs.rename_all {
                Some(rule) => rule.apply_to_variant(&v.ident.unraw().to_string()),
                None => v.ident.unraw().to_string(),
            },
            LitStr::value,
        );
        let span = rename.as_ref().map_or(v.ident.span(), LitStr::span);
        let ty = match (&v.fields, other) {
            (Fields::Unit, true) => None,
            (_, true) => {
                cx.error_spanned_by(
                    &v.ident,
                    "the catch-all kind (`#[serde(other)]`) is a unit variant: serde keeps nothing of a document it takes",
                );
                // Still a kind for the code generated around the error, so that its struct
                // is not reported on top of it.
                match &v.fields {
                    Fields::Unnamed(f) if f.unnamed.len() == 1 => Some(&f.unnamed[0].ty),
                    _ => continue,
                }
            }
            (Fields::Unnamed(f), false) if f.unnamed.len() == 1 => Some(&f.unnamed[0].ty),
            _ => {
                cx.error_spanned_by(
                    &v.ident,
                    format!(
                        "each kind is a variant holding the kind's struct, `{0}({0}{1})`, whose struct derives `Model` with `#[odm(kind_of = \"{1}\")]`",
                        v.ident, input.ident
                    ),
                );
                continue;
            }
        };
        if let Some(first) = variants.iter().find(|o| o.value == value) {
            cx.error_at(
                span,
                format!(
                    "two kinds with the discriminator value \"{value}\": `{}` and `{}`; each kind needs its own (`#[serde(rename = \"...\")]`)",
                    first.ident, v.ident
                ),
            );
        }
        variants.push(Variant {
            ident: &v.ident,
            ty,
            value,
            span,
        });
    }
    variants
}

/// serde's `rename` (serialize name) and `other` on a variant.
fn variant_serde(v: &syn::Variant) -> (Option<LitStr>, bool) {
    let mut rename = None;
    let mut other = false;
    for a in v.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                if meta.input.peek(syn::Token![=]) {
                    rename = Some(meta.value()?.parse::<LitStr>()?);
                } else {
                    meta.parse_nested_meta(|inner| {
                        if inner.path.is_ident("serialize") {
                            rename = Some(inner.value()?.parse::<LitStr>()?);
                        } else {
                            let _ = inner.value().and_then(|v| v.parse::<syn::Expr>());
                        }
                        Ok(())
                    })?;
                }
            } else if meta.path.is_ident("other") {
                other = true;
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        });
    }
    (rename, other)
}

/// `common = "title, isbn"`: the names, each with the span of the string.
fn parse_common(cx: &Ctxt, lit: Option<&LitStr>) -> Vec<(String, Span)> {
    let Some(lit) = lit else {
        return Vec::new();
    };
    let mut out: Vec<(String, Span)> = Vec::new();
    for name in lit.value().split(',').map(str::trim) {
        if !attr::is_field_name(name) || syn::parse_str::<Ident>(name).is_err() {
            cx.error_spanned_by(
                lit,
                format!("`common` lists field names separated by commas; `{name}` is not one"),
            );
        } else if out.iter().any(|(n, _)| n == name) {
            cx.error_spanned_by(lit, format!("`{name}` is listed twice in `common`"));
        } else {
            out.push((name.to_owned(), lit.span()));
        }
    }
    out
}
