//! An enum of kinds (`#[derive(Model)]` on `enum Book { Single(SingleBook), .. }`), resolved:
//! its discriminator field, its kinds and their values, its common fields. Its rules are
//! `check::kinds`; the expansion (`expand::kinds`) reads it and reports nothing.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type};

use super::attr::Derive;
use super::attr::{self, ContainerAttrs};
use crate::ctxt::Ctxt;

/// One kind of the enum (or its catch-all): a variant that resolved.
pub struct Variant<'a> {
    pub ident: &'a Ident,
    /// The kind's struct; `None` for the catch-all.
    pub ty: Option<&'a Type>,
    pub value: String,
    /// Where the value comes from (a `rename` string, else the variant's name).
    pub span: Span,
}

/// How a variant is written, as read: its rules (`check::kinds`) report the shapes that are no
/// kind.
pub enum VariantShape<'a> {
    /// `Single(SingleBook)`: a kind.
    Kind(&'a Type),
    /// `#[serde(other)] Other`: the catch-all.
    CatchAll,
    /// `#[serde(other)]` on a variant holding a value: refused, and still a kind for the code
    /// generated around the error, so that its struct is not reported on top of it.
    CatchAllHolding(&'a Type),
    /// `#[serde(other)]` on a variant of another shape: refused, and left out.
    CatchAllOther,
    /// Any other shape: refused, and left out.
    Other,
}

/// One variant, as written.
pub struct ReadVariant<'a> {
    pub ident: &'a Ident,
    pub shape: VariantShape<'a>,
    /// Its discriminator value and where it comes from.
    pub value: String,
    pub span: Span,
}

/// One name of `common = "title, isbn"`, as read.
pub enum CommonName<'s> {
    /// A field name listed once so far.
    Listed(&'s str),
    /// Not a field name.
    Invalid(&'s str),
    /// Listed before.
    Twice(&'s str),
}

/// The enum of kinds as the expansion reads it.
pub struct EnumOfKinds<'a> {
    pub attrs: ContainerAttrs,
    /// Its generics, when it has any: nothing is resolved or generated (impls without the
    /// parameters would only add errors), and its rule reports them.
    pub generics: Option<&'a syn::Generics>,
    /// The discriminator field (`#[serde(tag = "...")]`); empty when missing (reported).
    pub tag: String,
    /// Every variant as written, which the rules read.
    pub read: Vec<ReadVariant<'a>>,
    /// The kinds, and the catch-all (`ty: None`): the variants that resolved.
    pub variants: Vec<Variant<'a>>,
    /// `common = "title, isbn"`: the fields every kind has.
    pub common: Vec<(String, Span)>,
}

/// Reads the enum of kinds `input` (its attributes parsed into `cx`, the one report of
/// reading); its rules, `check::kinds`, report what keeps a part of it from resolving (a
/// variant of another shape, a discriminator value given twice, a malformed `common`).
pub fn resolve<'a>(cx: &Ctxt, input: &'a DeriveInput) -> EnumOfKinds<'a> {
    let attrs = ContainerAttrs::parse(cx, &input.attrs, Derive::Model);
    let Data::Enum(data) = &input.data else {
        unreachable!("called for enums")
    };
    let tag = attrs
        .serde_tag
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_default();
    let read: Vec<ReadVariant<'a>> = data
        .variants
        .iter()
        .map(|v| read_variant(v, &attrs))
        .collect();
    let variants = read
        .iter()
        .filter_map(|v| {
            let ty = match v.shape {
                VariantShape::Kind(ty) | VariantShape::CatchAllHolding(ty) => Some(ty),
                VariantShape::CatchAll => None,
                VariantShape::CatchAllOther | VariantShape::Other => return None,
            };
            Some(Variant {
                ident: v.ident,
                ty,
                value: v.value.clone(),
                span: v.span,
            })
        })
        .collect();
    let common = match &attrs.common {
        Some(lit) => common_names(&lit.value())
            .into_iter()
            .filter_map(|n| match n {
                CommonName::Listed(name) => Some((name.to_owned(), lit.span())),
                CommonName::Invalid(_) | CommonName::Twice(_) => None,
            })
            .collect(),
        None => Vec::new(),
    };
    let generics = (!input.generics.params.is_empty()).then_some(&input.generics);
    EnumOfKinds {
        attrs,
        generics,
        tag,
        read,
        variants,
        common,
    }
}

/// One variant: its shape, and its discriminator value (serde's `rename`, else its name under
/// the enum's `rename_all`).
fn read_variant<'a>(v: &'a syn::Variant, attrs: &ContainerAttrs) -> ReadVariant<'a> {
    let (rename, other) = variant_serde(v);
    let value = rename.as_ref().map_or_else(
        || match attrs.rename_all {
            Some(rule) => rule.apply_to_variant(&v.ident.unraw().to_string()),
            None => v.ident.unraw().to_string(),
        },
        LitStr::value,
    );
    let span = rename.as_ref().map_or(v.ident.span(), LitStr::span);
    let one = match &v.fields {
        Fields::Unnamed(f) if f.unnamed.len() == 1 => Some(&f.unnamed[0].ty),
        _ => None,
    };
    let shape = match (&v.fields, other, one) {
        (Fields::Unit, true, _) => VariantShape::CatchAll,
        (_, true, Some(ty)) => VariantShape::CatchAllHolding(ty),
        (_, true, None) => VariantShape::CatchAllOther,
        (_, false, Some(ty)) => VariantShape::Kind(ty),
        (_, false, None) => VariantShape::Other,
    };
    ReadVariant {
        ident: &v.ident,
        shape,
        value,
        span,
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

/// `common = "title, isbn"`: each name as read, in order.
pub fn common_names(text: &str) -> Vec<CommonName<'_>> {
    let mut out: Vec<CommonName<'_>> = Vec::new();
    for name in text.split(',').map(str::trim) {
        let listed = |n: &CommonName<'_>| matches!(n, CommonName::Listed(l) if *l == name);
        if !attr::is_field_name(name) || syn::parse_str::<Ident>(name).is_err() {
            out.push(CommonName::Invalid(name));
        } else if out.iter().any(listed) {
            out.push(CommonName::Twice(name));
        } else {
            out.push(CommonName::Listed(name));
        }
    }
    out
}
