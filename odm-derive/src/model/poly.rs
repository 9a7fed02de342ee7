//! `#[derive(PolyRef)]` read: an enum of references to several models, each variant holding a
//! `Ref` to one model or the catch-all `DbRef`; its misuses reported at their tokens.

use syn::{Data, DeriveInput, Fields, Ident, Type};

use super::ref_inner;
use crate::ctxt::Ctxt;

/// One variant of a polymorphic reference.
pub enum Target<'a> {
    /// `Book(Ref<Book>)`
    Model(&'a Ident, &'a Type),
    /// `Other(DbRef)`: DBRefs to any other collection.
    Other(&'a Ident),
}

/// The enum's targets, its misuses reported to `cx`; `None` when nothing can be generated (not
/// an enum, or a generic one).
pub fn parse<'a>(input: &'a DeriveInput, cx: &Ctxt) -> Option<Vec<Target<'a>>> {
    let ident = &input.ident;
    let Data::Enum(data) = &input.data else {
        cx.error_spanned_by(
            ident,
            "`PolyRef` is derived for an enum whose variants each hold a `Ref` to one model: `enum Subject { Book(Ref<Book>), Author(Ref<Author>) }`",
        );
        return None;
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`PolyRef` cannot be derived for a generic enum: its targets must be known",
        );
        // Nothing is generated: impls without the parameters would only add errors.
        return None;
    }
    let mut targets = Vec::new();
    for v in &data.variants {
        let ty = match &v.fields {
            Fields::Unnamed(f) if f.unnamed.len() == 1 => &f.unnamed[0].ty,
            _ => {
                cx.error_spanned_by(
                    &v.ident,
                    format!(
                        "each variant of a polymorphic reference holds a reference to one model, `{0}(Ref<{0}>)`, or is the catch-all `Other(DbRef)`",
                        v.ident
                    ),
                );
                continue;
            }
        };
        if let Some(model) = ref_inner(ty) {
            targets.push(Target::Model(&v.ident, model));
        } else if is_dbref(ty) {
            if targets.iter().any(|t| matches!(t, Target::Other(_))) {
                cx.error_spanned_by(
                    &v.ident,
                    "a polymorphic reference has at most one catch-all variant holding `DbRef`",
                );
            }
            targets.push(Target::Other(&v.ident));
        } else {
            cx.error_spanned_by(
                ty,
                "a variant of a polymorphic reference holds `Ref<Model>` (or `DbRef`, the catch-all for DBRefs to other collections)",
            );
        }
    }
    if data.variants.is_empty() {
        cx.error_spanned_by(
            ident,
            "a polymorphic reference has at least one target: a variant holding `Ref<Model>`",
        );
    }
    Some(targets)
}

/// `DbRef` by its last path segment.
fn is_dbref(ty: &Type) -> bool {
    matches!(ty, Type::Path(tp) if tp.qself.is_none()
        && tp.path.segments.last().is_some_and(|s| s.ident == "DbRef" && s.arguments.is_empty()))
}
