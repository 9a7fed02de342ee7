//! The rules of an enum of kinds (resolved in `model::kinds`): no attribute that belongs on a
//! struct, a discriminator field named by serde's internal tagging, at least one kind, and
//! indexes on the base over common fields only.

use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields};

use super::super::attr::{self, ContainerAttrs};
use super::super::kinds::{common_names, CommonName, EnumOfKinds, ReadVariant, VariantShape};
use crate::ctxt::Ctxt;

/// Every rule of the enum of kinds `e`, read from `input`, in the order its tokens are read.
/// A generic enum is reported alone: nothing is generated for it.
pub fn check(cx: &Ctxt, input: &DeriveInput, e: &EnumOfKinds<'_>) {
    e.attrs.versions.check_on_enum(cx);
    if let Some(generics) = e.generics {
        cx.error_spanned_by(
            generics,
            "`Model` cannot be derived for a generic enum: the stored shape must be known at compile time",
        );
        return;
    }
    check_struct_attributes(cx, &e.attrs);
    check_tag(cx, input, &e.attrs);
    check_variants(cx, input, e);
    check_common(cx, &e.attrs);
    check_some_kind(cx, input, e);
    check_base_indexes(cx, input, &e.attrs, &e.common);
}

/// Each variant is a kind holding its struct, or the unit catch-all, and no two kinds share a
/// discriminator value.
fn check_variants(cx: &Ctxt, input: &DeriveInput, e: &EnumOfKinds<'_>) {
    let mut kinds: Vec<&ReadVariant<'_>> = Vec::new();
    for v in &e.read {
        match v.shape {
            VariantShape::Kind(_) | VariantShape::CatchAll => {}
            VariantShape::CatchAllHolding(_) | VariantShape::CatchAllOther => cx.error_spanned_by(
                v.ident,
                "the catch-all kind (`#[serde(other)]`) is a unit variant: serde keeps nothing of a document it takes",
            ),
            VariantShape::Other => cx.error_spanned_by(
                v.ident,
                format!(
                    "each kind is a variant holding the kind's struct, `{0}({0}{1})`, whose struct derives `Model` with `#[odm(kind_of = \"{1}\")]`",
                    v.ident, input.ident
                ),
            ),
        }
        if matches!(v.shape, VariantShape::CatchAllOther | VariantShape::Other) {
            continue;
        }
        if let Some(first) = kinds.iter().find(|o| o.value == v.value) {
            cx.error_at(
                v.span,
                format!(
                    "two kinds with the discriminator value \"{}\": `{}` and `{}`; each kind needs its own (`#[serde(rename = \"...\")]`)",
                    v.value, first.ident, v.ident
                ),
            );
        }
        kinds.push(v);
    }
}

/// `common` lists field names, each once.
fn check_common(cx: &Ctxt, attrs: &ContainerAttrs) {
    let Some(lit) = &attrs.common else {
        return;
    };
    for name in common_names(&lit.value()) {
        match name {
            CommonName::Listed(_) => {}
            CommonName::Invalid(name) => cx.error_spanned_by(
                lit,
                format!("`common` lists field names separated by commas; `{name}` is not one"),
            ),
            CommonName::Twice(name) => {
                cx.error_spanned_by(lit, format!("`{name}` is listed twice in `common`"))
            }
        }
    }
}

/// `kind_of`, `bucket`, `tree` and `subset_of` belong on structs, and the enum is internally
/// tagged.
fn check_struct_attributes(cx: &Ctxt, attrs: &ContainerAttrs) {
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
}

/// The discriminator field is given (`#[serde(tag = "type")]`) and is a stored field name.
fn check_tag(cx: &Ctxt, input: &DeriveInput, attrs: &ContainerAttrs) {
    match &attrs.serde_tag {
        Some(tag) => {
            if !attr::is_field_name(&tag.value()) {
                cx.error_spanned_by(
                    tag,
                    "the discriminator is a stored field name: not empty, without `.`, `$` or NUL",
                );
            }
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
        }
    }
}

/// An enum of only unit variants has no kind.
fn check_some_kind(cx: &Ctxt, input: &DeriveInput, e: &EnumOfKinds<'_>) {
    let Data::Enum(data) = &input.data else {
        return;
    };
    if !e.variants.iter().any(|v| v.ty.is_some())
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
