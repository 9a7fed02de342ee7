//! The rule of `cascade = "background"` (parsed in `attr::background`).

use super::super::attr::Cascade;
use super::super::Container;
use crate::ctxt::Ctxt;

/// A `latest = N` array is written when a source is inserted, not cascaded: there is no
/// background to run it in.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(d) = &f.denormalize else { continue };
        if let (Some((Cascade::Background, key)), Some(_)) = (d.cascade, d.latest) {
            cx.error_at(
                key,
                "`cascade = \"background\"` is for copies of source fields; the last N sources (`latest`) are pushed by the insert itself",
            );
        }
    }
}
