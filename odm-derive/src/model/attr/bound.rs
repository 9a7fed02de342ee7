//! Array bounds: `max = N` and `allow_large = "reason"`.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Lit, LitStr};

use super::string_value;
use crate::ctxt::Ctxt;

/// A declared array bound: `max = N`, and the stated reason for a large one.
#[derive(Default)]
pub struct Bound {
    pub max: Option<(u32, Span)>,
    pub allow_large: Option<LitStr>,
}

/// What [`parse_bound_key`] made of a key.
#[derive(PartialEq, Eq)]
pub(super) enum BoundKey {
    /// `max` or `allow_large`, with a good value.
    Valid,
    /// `max` or `allow_large` with a bad value, already reported.
    Invalid,
    /// Another key, left to the caller.
    Other,
}

/// Parses `max = N` or `allow_large = "reason"`.
pub(super) fn parse_bound_key(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    bound: &mut Bound,
) -> syn::Result<BoundKey> {
    if meta.path.is_ident("max") {
        let lit: Lit = meta.value()?.parse()?;
        let max = match &lit {
            Lit::Int(i) => match i.base10_parse::<u32>() {
                Ok(v) if v > 0 => Some((v, i.span())),
                _ => {
                    cx.error_spanned_by(i, "`max` is a whole number of elements, at least 1");
                    None
                }
            },
            other => {
                cx.error_spanned_by(other, "expected a whole number: `max = 100`");
                None
            }
        };
        if bound.max.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `max`");
        }
        match max {
            Some(max) => {
                bound.max = Some(max);
                Ok(BoundKey::Valid)
            }
            None => Ok(BoundKey::Invalid),
        }
    } else if meta.path.is_ident("allow_large") {
        let lit = string_value(cx, meta, "allow_large", "why this array stays manageable")?;
        if bound.allow_large.is_some() {
            cx.error_spanned_by(&meta.path, "duplicate `allow_large`");
        }
        match lit {
            Some(lit) if lit.value().trim().is_empty() => {
                cx.error_spanned_by(&lit, "`allow_large` needs a reason: say why this array stays manageable, e.g. `allow_large = \"one entry per country\"`");
                Ok(BoundKey::Invalid)
            }
            Some(lit) => {
                bound.allow_large = Some(lit);
                Ok(BoundKey::Valid)
            }
            None => Ok(BoundKey::Invalid),
        }
    } else {
        Ok(BoundKey::Other)
    }
}
