//! Parsing `#[odm(soft_delete)]` (or `soft_delete = "removed_at"`): a delete sets the field to
//! the time of the delete instead of removing the document (its rules are in
//! `check::soft_delete`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{LitStr, Token};

use super::{is_field_name, string_value};
use crate::ctxt::Ctxt;

/// The field holding the deletion time, by default `deleted_at`.
const DEFAULT_FIELD: &str = "deleted_at";

/// `soft_delete` or `soft_delete = "field"`.
pub struct SoftDeleteAttr {
    /// The key, where errors about the attribute point.
    pub span: Span,
    /// The field named, when not the default.
    pub field: Option<LitStr>,
}

impl SoftDeleteAttr {
    /// The Rust name of the field holding the deletion time.
    pub fn name(&self) -> String {
        self.field
            .as_ref()
            .map_or_else(|| DEFAULT_FIELD.to_owned(), LitStr::value)
    }
}

/// Parses `soft_delete` (or `soft_delete = "field"`) into `slot`, reporting a repeated key at
/// its second occurrence.
pub fn parse(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    slot: &mut Option<SoftDeleteAttr>,
) -> syn::Result<()> {
    let span = meta.path.span();
    let field = if meta.input.peek(Token![=]) {
        match string_value(cx, meta, "soft_delete", DEFAULT_FIELD)? {
            Some(lit) if is_field_name(&lit.value()) => Some(lit),
            Some(lit) => {
                cx.error_spanned_by(
                    &lit,
                    "`soft_delete` names the field holding the time of the delete: `soft_delete = \"deleted_at\"`",
                );
                return Ok(());
            }
            None => return Ok(()),
        }
    } else {
        None
    };
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, "duplicate odm attribute `soft_delete`");
        return Ok(());
    }
    *slot = Some(SoftDeleteAttr { span, field });
    Ok(())
}
