//! `#[odm(soft_delete)]` (or `soft_delete = "removed_at"`): a delete sets the field to the time
//! of the delete instead of removing the document, and the model's queries skip the documents
//! where it is set.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{LitStr, Token};

use super::syntax::{closest, is_field_name, string_value};
use super::{Container, Field, Shape};
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

/// The model's field holding the deletion time, once `check` accepted it.
pub fn field<'c, 'a>(cont: &'c Container<'a>) -> Option<&'c Field<'a>> {
    let soft = cont.soft_delete.as_ref()?;
    cont.field_named(&soft.name())
        .filter(|f| !f.is_id() && !f.skipped && matches!(f.shape, Shape::Option(_)))
}

/// The field exists, is stored, is an `Option` (`None` until the delete), and the model has a
/// collection of its own.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    let Some(soft) = &cont.soft_delete else {
        return;
    };
    if cont.kind_of.is_some() {
        cx.error_at(
            soft.span,
            "a kind is stored in the collection of its base: `soft_delete` is declared on a model with a collection of its own",
        );
    }
    let name = soft.name();
    let Some(f) = cont.field_named(&name) else {
        let known: Vec<String> = cont
            .stored_fields()
            .map(|f| f.ident.unraw().to_string())
            .collect();
        let hint = closest(&name, &known)
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        let message = format!(
            "`soft_delete` keeps the time of the delete in the field `{name}`, which `{}` does not have{hint}: add `{name}: Option<odm::bson::DateTime>`{}",
            cont.ident,
            if soft.field.is_none() { " (or name another field with `soft_delete = \"...\"`)" } else { "" }
        );
        match &soft.field {
            Some(lit) => cx.error_spanned_by(lit, message),
            None => cx.error_at(soft.span, message),
        }
        return;
    };
    if f.is_id() || f.skipped {
        cx.error_spanned_by(
            f.ident,
            "the soft delete's field is a stored field of its own, not `_id` nor a field serde skips",
        );
    } else if !matches!(f.shape, Shape::Option(_)) {
        cx.error_spanned_by(
            f.ty,
            format!("the soft delete's field is `None` until the document is deleted: `{name}: Option<odm::bson::DateTime>`"),
        );
    }
}
