//! Rules of embedded documents (`#[embed]`).

use super::super::types::embed_type_problem;
use super::super::Container;
use crate::ctxt::Ctxt;

/// An `#[embed]` field is stored: serde must not skip it.
pub(super) fn check_embed_not_skipped(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        if let (Some(embed), true) = (&f.embed, f.skipped) {
            cx.error_spanned_by(&embed.tokens, "this field is skipped by serde, so nothing is embedded; remove `#[embed]` or the skip");
        }
    }
}

/// `_id` is matched as a whole: it has no typed paths below it, so `#[embed]` cannot go on it.
pub(super) fn check_embed_not_on_id(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        if let (Some(embed), true) = (&f.embed, f.is_id()) {
            cx.error_spanned_by(&embed.tokens, "`#[embed]` is not supported on `_id`: the id is matched as a whole; remove `#[embed]`");
        }
    }
}

/// `#[embed]` holds a struct deriving `Embed`, an `Option` of one or a `Vec` of one: not a
/// plain value (those need no attribute) and not two wrappers deep. Other types are left to
/// the compiler, which reports a missing `Embed` impl at the type.
pub(super) fn check_embed_type(cx: &Ctxt, cont: &Container<'_>) {
    // A copy that is also embedded is reported by `check_copy_alone`.
    for f in cont
        .fields
        .iter()
        .filter(|f| f.embed.is_some() && f.denormalize.is_none())
    {
        if let Some((culprit, message)) = embed_type_problem(f.ty) {
            cx.error_spanned_by(culprit, message);
        }
    }
}
