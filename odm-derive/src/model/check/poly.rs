//! The rules of a polymorphic reference (`#[derive(PolyRef)]`, read in `model::poly`): an enum,
//! not generic, of at least one variant, each holding a `Ref` to one model or the one
//! catch-all `DbRef`.

use crate::ctxt::Ctxt;
use crate::model::poly::{Holds, PolyRef, Shape};

/// Every rule of the polymorphic reference `p`, in the order its tokens are read.
pub fn check(cx: &Ctxt, p: &PolyRef<'_>) {
    let variants = match &p.shape {
        Shape::NotEnum => {
            cx.error_spanned_by(
                p.ident,
                "`PolyRef` is derived for an enum whose variants each hold a `Ref` to one model: `enum Subject { Book(Ref<Book>), Author(Ref<Author>) }`",
            );
            return;
        }
        Shape::Generic(generics) => {
            cx.error_spanned_by(
                generics,
                "`PolyRef` cannot be derived for a generic enum: its targets must be known",
            );
            return;
        }
        Shape::Enum(variants) => variants,
    };
    let mut catch_all = false;
    for v in variants {
        match &v.holds {
            Holds::NotOne => cx.error_spanned_by(
                v.ident,
                format!(
                    "each variant of a polymorphic reference holds a reference to one model, `{0}(Ref<{0}>)`, or is the catch-all `Other(DbRef)`",
                    v.ident
                ),
            ),
            Holds::DbRef if catch_all => cx.error_spanned_by(
                v.ident,
                "a polymorphic reference has at most one catch-all variant holding `DbRef`",
            ),
            Holds::DbRef => catch_all = true,
            Holds::Other(ty) => cx.error_spanned_by(
                ty,
                "a variant of a polymorphic reference holds `Ref<Model>` (or `DbRef`, the catch-all for DBRefs to other collections)",
            ),
            Holds::Ref(_) => {}
        }
    }
    if variants.is_empty() {
        cx.error_spanned_by(
            p.ident,
            "a polymorphic reference has at least one target: a variant holding `Ref<Model>`",
        );
    }
}
