//! The rules of `#[odm(soft_delete)]` (parsed in `attr::soft_delete`).

use syn::ext::IdentExt;

use super::super::{Container, Shape};
use super::closest;
use crate::ctxt::Ctxt;

/// The field exists, is stored, is an `Option` (`None` until the delete), and the model has a
/// collection of its own.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_rules(cx, cont);
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

/// `on_soft_delete = "mark"` marks the holder itself: its model has soft deletes, and the
/// reference names one model (the target's soft deletes are checked by the expansion, at the
/// value). `"leave"` is what every reference does without the option.
fn check_rules(cx: &Ctxt, cont: &Container<'_>) {
    for f in cont.stored_fields() {
        let Some(r) = &f.reference else { continue };
        let Some((true, span)) = r.on_soft_delete else {
            continue;
        };
        if r.poly.is_some() {
            cx.error_at(span, "a polymorphic reference names several models: `on_soft_delete = \"mark\"` is declared on a reference to one model");
        } else if cont.soft_delete.is_none() {
            cx.error_at(
                span,
                format!("`on_soft_delete = \"mark\"` marks this `{}` when the document it references is soft-deleted: `{}` needs soft deletes of its own (`#[odm(soft_delete)]` and a field `deleted_at: Option<odm::bson::DateTime>`)", cont.ident, cont.ident),
            );
        }
    }
}
