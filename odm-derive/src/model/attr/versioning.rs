//! Parsing `#[odm(version)]`, `#[odm(created_at)]`, `#[odm(updated_at)]` on a model's fields:
//! the fields every write of the ODM keeps (their rules are in `check::versioning`; their types
//! are checked by the compiler, see `expand::versioning`).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Attribute;

use super::Derive;
use super::{key_name, skip_value};
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
