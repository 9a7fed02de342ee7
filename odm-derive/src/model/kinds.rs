//! An enum of kinds (`#[derive(Model)]` on `enum Book { Single(SingleBook), .. }`), resolved
//! and checked: its discriminator field, its kinds and their values, its common fields. The
//! expansion (`expand::kinds`) reads it and reports nothing.

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

/// Resolves and checks the enum, reporting every problem into `cx`; `None` when nothing can
/// be generated (a generic enum).
pub fn resolve<'a>(cx: &Ctxt, input: &'a DeriveInput) -> Option<EnumOfKinds<'a>> {
    let attrs = ContainerAttrs::parse(cx, &input.attrs, Derive::Model);
    attrs.versions.check_on_enum(cx);
    let Data::Enum(data) = &input.data else {
        unreachable!("called for enums")
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`Model` cannot be derived for a generic enum: the stored shape must be known at compile time",
        );
        // Nothing is generated: impls without the parameters would only add errors.
        return None;
    }
    if let Some((_, lit)) = &attrs.kind_of {
        cx.error_spanned_by(
            lit,
            "an enum of kinds is a base, not a kind: `kind_of` goes on the struct of each kind",
        );
    }
    if let Some(bucket) = &attrs.bucket {
        cx.error_at(
            bucket.span,
            "an enum of kinds cannot be a bucket: declare `bucket(...)` on a struct with a collection of its own",
        );
    }
    if let Some(tree) = &attrs.tree {
        cx.error_at(
            tree.span,
            "a tree is declared on a struct stored in its own collection, not on an enum of kinds",
        );
    }
    if let Some((_, lit)) = &attrs.subset_of {
        cx.error_spanned_by(
            lit,
            "`subset_of` goes on a struct stored in its own collection, not on an enum of kinds",
        );
    }
    if let Some(span) = attrs.serde_not_internal {
        cx.error_at(
            span,
            "an enum of kinds is stored in one collection with a discriminator field: use serde's internally tagged representation, `#[serde(tag = \"type\")]` alone",
        );
    }
    let tag = match &attrs.serde_tag {
        Some(tag) => {
            if !attr::is_field_name(&tag.value()) {
                cx.error_spanned_by(
                    tag,
                    "the discriminator is a stored field name: not empty, without `.`, `$` or NUL",
                );
            }
            tag.value()
        }
        None => {
            if attrs.serde_not_internal.is_none() {
                cx.error_spanned_by(
                    &input.ident,
                    format!(
                        "`{}` needs a discriminator field: add `#[serde(tag = \"type\")]` (every kind is stored in one collection, told apart by that field)",
                        input.ident
                    ),
                );
            }
            String::new()
        }
    };
    let variants = resolve_variants(cx, input, data, &attrs);
    if !variants.iter().any(|v| v.ty.is_some())
        && data
            .variants
            .iter()
            .all(|v| matches!(v.fields, Fields::Unit))
    {
        cx.error_spanned_by(
            &input.ident,
            "an enum of kinds has at least one kind: a variant holding a struct that derives `Model`",
        );
    }
    let common = parse_common(cx, attrs.common.as_ref());
    check_base_indexes(cx, input, &attrs, &common);
    Some(EnumOfKinds {
        attrs,
        tag,
        variants,
        common,
    })
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

/// An index on the base covers every kind: its keys are common fields.
fn check_base_indexes(
    cx: &Ctxt,
    input: &DeriveInput,
    attrs: &ContainerAttrs,
    common: &[(String, Span)],
) {
    for index in &attrs.indexes {
        let (Some(lit), Some(key)) = (
            &index.keys_lit,
            index
                .keys
                .iter()
                .find(|k| !common.iter().any(|(n, _)| *n == k.segments[0])),
        ) else {
            continue;
        };
        let listed: Vec<String> = common.iter().map(|(n, _)| format!("`{n}`")).collect();
        cx.error_spanned_by(
            lit,
            format!(
                "`{}` is not a common field of `{}`, so an index on the base cannot cover it ({}): list it in `common`, or index it on the kind that stores it (where it is partial on the kind)",
                key.segments[0],
                input.ident,
                if listed.is_empty() { "`common` lists none".to_owned() } else { format!("common: {}", listed.join(", ")) }
            ),
        );
    }
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
