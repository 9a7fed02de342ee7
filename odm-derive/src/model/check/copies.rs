//! Rules of copies (`#[denormalize]`) and of `#[frequently_updated]`.

use super::super::attr::{CopyKind, DenormalizeAttr};
use super::super::types::embed_type_problem;
use super::super::{Container, Field, Shape};
use super::MAX_EMBEDDED;
use crate::ctxt::Ctxt;

/// A copy names its source model (`from`) and the fields it copies (`fields`).
pub(super) fn check_copy_names_source(cx: &Ctxt, cont: &Container<'_>) {
    for (_, d) in copies(cont) {
        if d.malformed {
            continue;
        }
        if d.from.is_none() {
            cx.error_spanned_by(
                &d.tokens,
                "`#[denormalize]` needs its source model: `from = \"Part\"`",
            );
        }
        if d.fields_lit.is_none() {
            cx.error_spanned_by(
                &d.tokens,
                "`#[denormalize]` needs the fields it copies: `fields = \"name\"`",
            );
        }
    }
}

/// A copy is kept by the ODM alone: it is not also embedded or a reference, not the id, and
/// serde stores it.
pub(super) fn check_copy_alone(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        if let Some(embed) = &f.embed {
            cx.error_spanned_by(&embed.tokens, "a copy is kept up to date by the ODM, not embedded by hand: remove `#[embed]` (the summary type still derives `Embed`)");
        }
        if let Some(r) = &f.reference {
            cx.error_spanned_by(&r.tokens, "a field is a copy or a reference, not both: declare the reference on a field of its own and name it in `via`");
        }
        if f.is_id() {
            cx.error_spanned_by(
                &d.tokens,
                "`_id` cannot be a copy: it is the document's own id",
            );
        }
        if f.skipped {
            cx.error_spanned_by(
                &d.tokens,
                "this field is skipped by serde, so the copy is never stored",
            );
        }
    }
}

/// A copy without `via` holds summaries of the source: a struct deriving `Embed`, or an
/// `Option` or `Vec` of one; a plain value is one field copied `via` a reference.
pub(super) fn check_summary_type(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        // `latest` on a field that is not a `Vec` is reported by `check_latest_copy`.
        let latest_not_array = d.latest.is_some() && !matches!(f.shape, Shape::Vec(_));
        if d.malformed || d.kind() == CopyKind::Flat || f.embed.is_some() || latest_not_array {
            continue;
        }
        let Some((culprit, _)) = embed_type_problem(f.ty) else {
            continue;
        };
        let message = if d.kind() == CopyKind::Latest {
            "`latest` keeps summaries of the last sources: a `Vec` of a struct that derives `Embed`, e.g. `Vec<LogSummary>`".to_owned()
        } else {
            let ty = quote::quote!(#culprit).to_string().replace(' ', "");
            format!("a copy without `via` is a summary of the source, a struct that derives `Embed` and holds `id: Ref<Source>`; to copy one field into `{ty}`, follow a reference: `via = \"product\"`")
        };
        cx.error_spanned_by(culprit, message);
    }
}

/// A field copied `via` a reference holds one value of one source field: it is not a `Vec`,
/// names one field, and has no array bound.
pub(super) fn check_flat_copy(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        // A rejected `via` or `latest` makes the kind a guess: the kind's rules wait.
        if d.malformed || d.kind() != CopyKind::Flat {
            continue;
        }
        if matches!(f.shape, Shape::Vec(_)) {
            cx.error_spanned_by(f.ty, "a field copied `via` a reference holds the one value of the referenced document; for an array of summaries, drop `via`");
        }
        if let (true, Some(lit)) = (d.fields.len() > 1, &d.fields_lit) {
            cx.error_spanned_by(lit, "a field copied `via` a reference copies one source field; give each copy a field of its own (`product_name`, `product_catalog_number`)");
        }
        if let Some((_, span)) = d.bound.max {
            cx.error_at(
                span,
                "`max` bounds an array of summaries; this copy is one value: remove `max`",
            );
        }
        if let Some(lit) = &d.bound.allow_large {
            cx.error_spanned_by(
                lit,
                "`allow_large` goes with an array bound; this copy is one value: remove it",
            );
        }
    }
}

/// The last N sources (`latest = N`) are a `Vec`, found through the source's reference to
/// this model (`via`), ordered by `sort`, and bounded by N alone.
pub(super) fn check_latest_copy(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        let Some((_, key, _)) = d.latest else {
            continue;
        };
        if !matches!(f.shape, Shape::Vec(_)) {
            cx.error_spanned_by(
                f.ty,
                "`latest` keeps an array of the last sources: `Vec<Summary>`",
            );
        }
        if d.malformed {
            continue;
        }
        if d.via.is_none() {
            cx.error_at(key, "`latest` needs the source's reference to this model, by which the last sources are found: `via = \"host\"`");
        }
        if d.sort.is_none() {
            cx.error_at(
                key,
                "`latest` needs the order that defines the last ones: `sort = \"time\"`",
            );
        }
        if let Some((_, span)) = d.bound.max {
            cx.error_at(
                span,
                "`latest = N` is already this array's bound: remove `max`",
            );
        }
    }
}

/// `sort` orders the last N sources: it is an option of `latest`.
pub(super) fn check_sort_with_latest(cx: &Ctxt, cont: &Container<'_>) {
    for (_, d) in copies(cont) {
        if d.malformed {
            continue;
        }
        if let (Some(sort), None) = (&d.sort, d.latest) {
            cx.error_spanned_by(
                sort,
                "`sort` orders the last N sources kept with `latest = N`; without `latest` there is nothing to order",
            );
        }
    }
}

/// The last N sources are kept in `sort` order by `$push ... $sort` on the summaries, which
/// sorts by the summary's copy of the key: a key that is not copied sorts nothing, and the
/// array would keep the last inserted sources rather than the latest.
pub(super) fn check_sort_key_copied(cx: &Ctxt, cont: &Container<'_>) {
    for (_, d) in copies(cont) {
        let (Some(sort), Some(_), false) = (&d.sort, d.latest, d.malformed) else {
            continue;
        };
        let value = sort.value();
        let name = super::super::attr::sort_key(&value).1;
        if d.fields_lit.is_some() && !d.fields.iter().any(|f| f == name) {
            let mut fields = d.fields.join(", ");
            fields.push_str(", ");
            fields.push_str(name);
            cx.error_spanned_by(
                sort,
                format!("`{name}` orders the summaries, so it is copied into them too: add it to `fields` (`fields = \"{fields}\"`) and to the summary type; the ODM sorts the array by the summaries' own `{name}`"),
            );
        }
    }
}

/// Arrays of copies do not grow without bound (rule of thumb 3): an array of summaries
/// declares `max = N`, the last N sources are `latest = N`, both at most 200 unless
/// `allow_large` says why; `max` bounds only an array.
pub(super) fn check_copy_bounds(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        // A copy of the wrong shape or type is reported by its own rule.
        if d.kind() == CopyKind::Flat || f.embed.is_some() || embed_type_problem(f.ty).is_some() {
            continue;
        }
        let is_array = matches!(f.shape, Shape::Vec(_));
        let (n, span, what) = match (d.latest, d.bound.max) {
            (Some((n, _, span)), _) => (n, span, "latest"),
            (None, Some((max, span))) if is_array => (max, span, "max"),
            (None, Some((_, span))) => {
                cx.error_at(span, "`max` bounds an array of summaries, and this field is not a `Vec`: remove `max`");
                continue;
            }
            (None, None) if is_array && !d.malformed => {
                cx.error_spanned_by(
                    &d.tokens,
                    "arrays must not grow without bound (rule of thumb 3): declare the most summaries this one holds, e.g. `max = 200`; if there can be more, keep the last ones (`latest = N`) or reference the sources instead",
                );
                continue;
            }
            (None, None) => {
                if let Some(lit) = &d.bound.allow_large {
                    cx.error_spanned_by(lit, "`allow_large` goes with a bound above 200 (`max = N` or `latest = N`), and this copy has none: remove it");
                }
                continue;
            }
        };
        match &d.bound.allow_large {
            None if n > MAX_EMBEDDED => cx.error_at(
                span,
                format!("`{what} = {n}` is above the limit of {MAX_EMBEDDED} embedded summaries (rule of thumb 3): keep fewer, or reference the sources instead; or keep the bound and state why with `allow_large = \"...\"`"),
            ),
            Some(lit) if n <= MAX_EMBEDDED => cx.error_spanned_by(
                lit,
                format!("`allow_large` is only for bounds above {MAX_EMBEDDED} embedded summaries, and this one is {n}: remove it"),
            ),
            _ => {}
        }
    }
}

/// `#[frequently_updated]` marks a stored field that changes: not the id (which never does),
/// not a field serde skips (which is never stored, so never copied).
pub(super) fn check_frequently_updated(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(attr) = &f.frequently_updated else {
            continue;
        };
        if f.is_id() {
            cx.error_spanned_by(attr, "`_id` never changes: remove `#[frequently_updated]`");
        } else if f.skipped {
            cx.error_spanned_by(attr, "this field is skipped by serde, so it is never stored or copied: remove `#[frequently_updated]`");
        }
    }
}

/// The `#[denormalize]` fields with their attribute.
pub(super) fn copies<'c, 'a>(
    cont: &'c Container<'a>,
) -> impl Iterator<Item = (&'c Field<'a>, &'c DenormalizeAttr)> {
    cont.fields
        .iter()
        .filter_map(|f| Some((f, f.denormalize.as_ref()?)))
}
