//! Arrays that do not grow without bound (rule of thumb 3).

use super::super::types::embed_type_problem;
use super::super::{Container, Shape};
use super::references::reference_shape_fits;
use crate::ctxt::Ctxt;

/// Rule of thumb 3 in numbers: more than a couple of hundred embedded documents, or more than a
/// few thousand ids, in one array is a design smell.
pub const MAX_EMBEDDED: u32 = 200;
pub const MAX_IDS: u32 = 5000;

/// Arrays must not grow without bound (rule of thumb 3): an embedded array and an array of
/// references declare `max = N`, at most a couple of hundred embedded documents or a few
/// thousand ids unless `allow_large` states why; `max` only bounds arrays.
pub(super) fn check_bounded_arrays(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        // A misdeclared field is reported by its own rule; its bound would only add noise.
        // A copy that is also embedded or a reference is reported by `check_copy_alone`.
        // A bucket's items are bounded by the bucket (`max`, or its period).
        if f.denormalize.is_some() || super::super::bucket::is_items(cont, f) {
            continue;
        }
        let (tokens, bound, limit, kind, embedded) = match (&f.embed, &f.reference) {
            (Some(e), _) if e.malformed || embed_type_problem(f.ty).is_some() => continue,
            (Some(e), _) => (
                &e.tokens,
                &e.bound,
                MAX_EMBEDDED,
                "embedded documents",
                true,
            ),
            (None, Some(r)) if r.malformed || !reference_shape_fits(f, r) => continue,
            (None, Some(r)) => (&r.tokens, &r.bound, MAX_IDS, "ids", false),
            (None, None) => continue,
        };
        let is_array = matches!(f.shape, Shape::Vec(_));
        match (is_array, bound.max) {
            (false, Some((_, span))) => {
                cx.error_at(
                    span,
                    "`max` bounds an array, and this field is not a `Vec`: remove `max`",
                );
            }
            (true, None) => {
                let message = if embedded {
                    "arrays must not grow without bound (rule of thumb 3): declare the most elements this one holds, e.g. `#[embed(max = 100)]`; if it can grow large, reference the documents instead (`#[reference(many, max = N)]`, or `#[parent]` on the other side)"
                } else {
                    "arrays must not grow without bound (rule of thumb 3): declare the most ids this one holds, e.g. `#[reference(many, max = 100)]`; if it can grow past a few thousand, put `#[parent]` on the other model instead"
                };
                cx.error_spanned_by(tokens, message);
            }
            (true, Some((max, span))) if max > limit && bound.allow_large.is_none() => {
                let alternative = if embedded {
                    "that many belong in a collection of their own, referenced (`#[reference(many, max = N)]`, or `#[parent]` on the other side)"
                } else {
                    "an array that large belongs on the other side, as `#[parent]` on the referenced model"
                };
                cx.error_at(
                    span,
                    format!("`max = {max}` is above the limit of {limit} {kind}: {alternative}; or keep the bound and state why with `allow_large = \"...\"`"),
                );
            }
            (_, _) => {}
        }
        if let (Some(lit), Some((max, _))) = (&bound.allow_large, bound.max) {
            if max <= limit {
                cx.error_spanned_by(lit, format!("`allow_large` is only for bounds above {limit} {kind}, and this one is {max}: remove it"));
            }
        }
    }
}
