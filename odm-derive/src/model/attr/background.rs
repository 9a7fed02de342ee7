//! Parsing `cascade = "background"` on a `#[denormalize]` field: the copy is cascaded by a
//! worker the application runs, from an intent the source update records in its own
//! transaction (the rule is in `check::background`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

use crate::ctxt::Ctxt;

/// How the copies of a `#[denormalize]` field follow their source.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cascade {
    /// Inside the source update (the default).
    Immediate,
    /// By the cascade worker, from the intent the source update records.
    Background,
}

/// Parses `cascade = "background"` (or `"immediate"`) into `slot`; a repeated key is reported at
/// its second occurrence, a bad value at the literal. Returns whether the option was valid.
pub fn parse(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    slot: &mut Option<(Cascade, Span)>,
) -> syn::Result<bool> {
    let key = meta.path.span();
    let Some(lit) = super::string_value(cx, meta, "cascade", "background")? else {
        return Ok(false);
    };
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, "duplicate `cascade`");
    }
    let mode = match lit.value().as_str() {
        "background" => Cascade::Background,
        "immediate" => Cascade::Immediate,
        other => {
            cx.error_spanned_by(
                &lit,
                format!("unknown cascade `{other}`, expected `\"immediate\"` (the default: in the source update) or `\"background\"` (by the cascade worker)"),
            );
            return Ok(false);
        }
    };
    *slot = Some((mode, key));
    Ok(true)
}
