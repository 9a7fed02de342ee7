//! Where a model's defaults may be declared (parsed in `attr::defaults`): on a model with a
//! collection of its own, or on an enum of kinds (an `Embed` takes no `#[odm(...)]` at all).

use crate::ctxt::Ctxt;
use crate::model::Container;

/// A kind declares none: it is read and written in its base's collection, with its base's.
pub(super) fn check(cx: &Ctxt, cont: &Container<'_>) {
    if cont.kind_of.is_none() {
        return;
    }
    for (key, span) in &cont.defaults.keys {
        cx.error_at(
            *span,
            format!("`{key}` is a model's default for its operations, and a kind is read and written in the collection of its base: declare it on the base"),
        );
    }
}
