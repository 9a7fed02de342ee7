//! `#[odm(version)]`, `#[odm(created_at)]`, `#[odm(updated_at)]` on a model's fields: the fields
//! every write of the ODM keeps. Parsing and the rules they follow (their types are checked
//! by the compiler, see `expand::versioning`).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Attribute;

use super::syntax::{key_name, skip_value};
use super::{Container, Derive, Field};
use crate::ctxt::Ctxt;

const FIELD_ODM_KEYS: &str = "`version`, `created_at`, `updated_at`";

/// Which kept field a field is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stamp {
    Version,
    CreatedAt,
    UpdatedAt,
}

impl Stamp {
    pub fn key(self) -> &'static str {
        match self {
            Stamp::Version => "version",
            Stamp::CreatedAt => "created_at",
            Stamp::UpdatedAt => "updated_at",
        }
    }
}

/// Parses `#[odm(version)]` (or `created_at`, `updated_at`) on a field into `slot`.
pub fn parse_field(cx: &Ctxt, attr: &Attribute, derive: Derive, slot: &mut Option<(Stamp, Span)>) {
    if derive == Derive::Embed {
        cx.error_spanned_by(
            attr,
            "versions and timestamps are kept on the document itself: put `#[odm(version)]`, `#[odm(created_at)]` or `#[odm(updated_at)]` on a field of the model",
        );
        return;
    }
    if matches!(attr.meta, syn::Meta::Path(_)) {
        cx.error_spanned_by(
            attr,
            format!("`#[odm(...)]` on a field takes one of {FIELD_ODM_KEYS}; other field attributes are `#[index(...)]`, `#[embed]`, `#[reference(...)]`, `#[parent(...)]`, `#[denormalize(...)]` and `#[frequently_updated]`"),
        );
        return;
    }
    let result = attr.parse_nested_meta(|meta| {
        let stamp = [Stamp::Version, Stamp::CreatedAt, Stamp::UpdatedAt]
            .into_iter()
            .find(|s| meta.path.is_ident(s.key()));
        match stamp {
            Some(stamp) => {
                if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
                    cx.error_spanned_by(
                        &meta.path,
                        format!("`{0}` takes no value: write `#[odm({0})]`", stamp.key()),
                    );
                    skip_value(&meta)?;
                }
                match slot {
                    Some((other, _)) => cx.error_spanned_by(
                        &meta.path,
                        format!(
                            "a field is one kept field: this one is already `{}`",
                            other.key()
                        ),
                    ),
                    None => *slot = Some((stamp, meta.path.span())),
                }
            }
            None => {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown odm field attribute `{}`, expected one of {FIELD_ODM_KEYS}; other field attributes are `#[index(...)]`, `#[embed]`, `#[reference(...)]`, `#[parent(...)]`, `#[denormalize(...)]` and `#[frequently_updated]`",
                        key_name(&meta)
                    ),
                );
                skip_value(&meta)?;
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.syn_error(e);
    }
}

/// The field keeping `stamp`, if any (the first, when a mistake declares two).
pub fn field_of<'c, 'a>(cont: &'c Container<'a>, stamp: Stamp) -> Option<&'c Field<'a>> {
    cont.stored_fields()
        .find(|f| f.stamp.is_some_and(|(s, _)| s == stamp))
}

/// One field per kept field, and not one the ODM or serde already treats otherwise.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    for stamp in [Stamp::Version, Stamp::CreatedAt, Stamp::UpdatedAt] {
        let mut first: Option<&Field<'_>> = None;
        for f in cont.fields.iter() {
            let Some((s, span)) = f.stamp else { continue };
            if s != stamp {
                continue;
            }
            match first {
                Some(first) => cx.error_at(
                    span,
                    format!(
                        "duplicate `#[odm({})]`: the model already keeps it in `{}`",
                        stamp.key(),
                        first.ident
                    ),
                ),
                None => first = Some(f),
            }
        }
    }
    for f in cont.fields.iter() {
        let Some((stamp, span)) = f.stamp else {
            continue;
        };
        let other = if f.is_id() {
            Some("the `_id`")
        } else if f.skipped {
            Some("a field serde skips")
        } else if f.reference.is_some() {
            Some("a reference")
        } else if f.denormalize.is_some() {
            Some("a denormalized copy")
        } else if f.embed.is_some() {
            Some("an embedded document")
        } else {
            None
        };
        if let Some(other) = other {
            cx.error_at(
                span,
                format!(
                    "`{}` is {other}, which cannot also be the kept `{}`: declare a field of its own",
                    f.ident,
                    stamp.key()
                ),
            );
        }
    }
}
