//! Rules that involve more than one attribute, or an attribute and a field's type. One
//! function per rule, each stating it.

use syn::ext::IdentExt;
use syn::Type;

use super::attr::{DenormalizeAttr, OnDelete, ReferenceAttr};
use super::{shape_of, Container, Derive, Field, Shape};
use crate::ctxt::Ctxt;

pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_id(cx, cont);
    super::versions::check(cx, cont);
    check_collection_name(cx, cont);
    check_index_not_on_id(cx, cont);
    check_index_options(cx, cont);
    check_expiring_index_on_date(cx, cont);
    check_one_text_index(cx, cont);
    check_compound_keys(cx, cont);
    check_compound_keys_distinct(cx, cont);
    check_compound_one_array(cx, cont);
    check_index_names_distinct(cx, cont);
    check_embed_not_skipped(cx, cont);
    check_embed_not_on_id(cx, cont);
    check_embed_type(cx, cont);
    check_reference_shape(cx, cont);
    check_dbref_references(cx, cont);
    check_reference_target(cx, cont);
    check_ref_has_attribute(cx, cont);
    check_reference_alone(cx, cont);
    check_id_not_a_reference(cx, cont);
    check_bounded_arrays(cx, cont);
    check_delete_rule_fits(cx, cont);
    check_inverse_side(cx, cont);
    check_copy_names_source(cx, cont);
    check_copy_alone(cx, cont);
    check_summary_type(cx, cont);
    check_flat_copy(cx, cont);
    check_latest_copy(cx, cont);
    check_sort_with_latest(cx, cont);
    check_sort_key_copied(cx, cont);
    check_copy_bounds(cx, cont);
    check_frequently_updated(cx, cont);
    super::bucket::check(cx, cont);
    super::background::check(cx, cont);
    super::counters::check(cx, cont);
    super::tree::check(cx, cont);
    super::shard::check(cx, cont);
    super::subset::check(cx, cont);
    super::versioning::check(cx, cont);
}

/// What kind of copy a `#[denormalize]` field is: a summary of the source (with its id), a
/// plain field copied through a reference (`via`), or the last N sources (`latest`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CopyKind {
    Summary,
    Flat,
    Latest,
}

pub fn copy_kind(d: &DenormalizeAttr) -> CopyKind {
    match (d.latest, &d.via) {
        (Some(_), _) => CopyKind::Latest,
        (None, Some(_)) => CopyKind::Flat,
        (None, None) => CopyKind::Summary,
    }
}

/// A copy names its source model (`from`) and the fields it copies (`fields`).
fn check_copy_names_source(cx: &Ctxt, cont: &Container<'_>) {
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
fn check_copy_alone(cx: &Ctxt, cont: &Container<'_>) {
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
fn check_summary_type(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        // `latest` on a field that is not a `Vec` is reported by `check_latest_copy`.
        let latest_not_array = d.latest.is_some() && !matches!(f.shape, Shape::Vec(_));
        if d.malformed || copy_kind(d) == CopyKind::Flat || f.embed.is_some() || latest_not_array {
            continue;
        }
        let Some((culprit, _)) = embed_type_problem(f) else {
            continue;
        };
        let message = if copy_kind(d) == CopyKind::Latest {
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
fn check_flat_copy(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        // A rejected `via` or `latest` makes the kind a guess: the kind's rules wait.
        if d.malformed || copy_kind(d) != CopyKind::Flat {
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
fn check_latest_copy(cx: &Ctxt, cont: &Container<'_>) {
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
fn check_sort_with_latest(cx: &Ctxt, cont: &Container<'_>) {
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
fn check_sort_key_copied(cx: &Ctxt, cont: &Container<'_>) {
    for (_, d) in copies(cont) {
        let (Some(sort), Some(_), false) = (&d.sort, d.latest, d.malformed) else {
            continue;
        };
        let value = sort.value();
        let name = super::attr::sort_key(&value).1;
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
fn check_copy_bounds(cx: &Ctxt, cont: &Container<'_>) {
    for (f, d) in copies(cont) {
        // A copy of the wrong shape or type is reported by its own rule.
        if copy_kind(d) == CopyKind::Flat || f.embed.is_some() || embed_type_problem(f).is_some() {
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
fn check_frequently_updated(cx: &Ctxt, cont: &Container<'_>) {
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
fn copies<'c, 'a>(
    cont: &'c Container<'a>,
) -> impl Iterator<Item = (&'c Field<'a>, &'c DenormalizeAttr)> {
    cont.fields
        .iter()
        .filter_map(|f| Some((f, f.denormalize.as_ref()?)))
}

/// Rule of thumb 3 in numbers: more than a couple of hundred embedded documents, or more than a
/// few thousand ids, in one array is a design smell.
pub const MAX_EMBEDDED: u32 = 200;
pub const MAX_IDS: u32 = 5000;

/// Whether a reference field's type fits its attribute: `Ref<T>` or `Option<Ref<T>>` for
/// `#[reference]` and `#[parent]`, `Vec<Ref<T>>` for `#[reference(many)]`.
fn reference_shape_fits(f: &Field<'_>, r: &ReferenceAttr) -> bool {
    if r.poly.is_some() {
        return match (r.many.is_some(), f.shape) {
            (false, Shape::Plain) => super::ref_inner(f.ty).is_none(),
            (false, Shape::Option(inner)) | (true, Shape::Vec(inner)) => {
                super::ref_inner(inner).is_none()
            }
            _ => false,
        };
    }
    match (r.parent, r.many.is_some(), f.shape) {
        (_, false, Shape::Plain) => super::ref_inner(f.ty).is_some(),
        (_, false, Shape::Option(inner)) => super::ref_inner(inner).is_some(),
        (false, true, Shape::Vec(inner)) => super::ref_inner(inner).is_some(),
        _ => false,
    }
}

/// `#[reference]` holds `Ref<T>` or `Option<Ref<T>>`; `#[reference(many)]` holds `Vec<Ref<T>>`;
/// `#[parent]` holds `Ref<T>` or `Option<Ref<T>>`.
fn check_reference_shape(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        // A copy that is also a reference is reported by `check_copy_alone`.
        if r.malformed || reference_shape_fits(f, r) || f.denormalize.is_some() {
            continue;
        }
        let refs = f.ref_target().is_some();
        if r.poly.is_some() {
            let message = match (r.many.is_some(), f.shape) {
                _ if refs => "`poly` holds an enum of references to several models (deriving `PolyRef`); a `Ref<T>` references one model: remove `poly`",
                (true, _) => "`#[reference(poly, many)]` holds an array of polymorphic references: `Vec<Subject>`, where `Subject` derives `PolyRef`",
                (false, _) => "an array of polymorphic references is `#[reference(poly, many, max = N)]`",
            };
            cx.error_spanned_by(f.ty, message);
            continue;
        }
        let message = match (r.parent, r.many.is_some(), f.shape) {
            (true, _, Shape::Vec(_)) => "`#[parent]` holds one reference to the parent (`Ref<Parent>` or `Option<Ref<Parent>>`); an array of references is `#[reference(many, max = N)]`".to_owned(),
            (true, _, _) => "`#[parent]` holds one reference to the parent: `Ref<Parent>` or `Option<Ref<Parent>>`".to_owned(),
            (false, true, Shape::Plain | Shape::Option(_)) if refs => "`#[reference(many)]` holds an array of references, `Vec<Ref<Target>>`; for one reference, remove `many`".to_owned(),
            (false, true, _) => "`#[reference(many)]` holds an array of references: `Vec<Ref<Target>>`".to_owned(),
            (false, false, Shape::Vec(_)) if refs => "an array of references is `#[reference(many, max = N)]`".to_owned(),
            // A struct where its reference belongs: name the fix.
            (false, false, Shape::Plain) if matches!(f.ty, Type::Path(_)) && plain_value_type(f.ty).is_none() => {
                let ty = f.ty;
                let ty = quote::quote!(#ty).to_string().replace(' ', "");
                format!("`#[reference]` holds a reference, not the document itself: `Ref<{ty}>`, stored as the referenced document's `_id`")
            }
            (false, false, _) => "`#[reference]` holds a reference, stored as the referenced document's `_id`: `Ref<Target>` or `Option<Ref<Target>>` (`Vec<Ref<Target>>` with `many`)".to_owned(),
        };
        cx.error_spanned_by(f.ty, message);
    }
}

/// A polymorphic reference, or one stored as DBRefs, is one-way: a two-way reference keeps
/// plain ids on both sides. DBRef storage (`#[serde(with = "odm::dbref")]`) is for a
/// `#[reference]`: a `#[parent]` is found by the parent's id.
fn check_dbref_references(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let r = f.reference.as_ref();
        if let (Some(_), Some(inv)) = (r.and_then(|r| r.poly), r.and_then(|r| r.inverse.as_ref())) {
            cx.error_spanned_by(inv, "a polymorphic reference is one-way: `inverse` pairs a reference with a single model's field; remove `inverse`");
        }
        let Some(span) = f.dbref else { continue };
        match r {
            None => cx.error_at(span, "`odm::dbref` stores a reference as a DBRef: the field needs `#[reference]` (on `Ref<T>`, `Option<Ref<T>>` or `Vec<Ref<T>>`)"),
            Some(r) if r.parent => cx.error_at(span, "a `#[parent]` is stored as the parent's id, which `children` and `reassign` query: DBRef storage is for a `#[reference]`"),
            Some(r) if r.poly.is_some() => cx.error_at(span, "a polymorphic reference is always stored as DBRefs: remove `#[serde(with = \"odm::dbref\")]`"),
            Some(r) if r.inverse.is_some() => cx.error_at(span, "a two-way reference keeps plain ids on both sides: remove `#[serde(with = \"odm::dbref\")]` or `inverse`"),
            Some(_) => {}
        }
    }
}

/// A reference targets a model: a plain value (`Ref<String>`) cannot be referenced. (A target
/// that is a struct but not a model is reported by the compiler, at the field's type.)
fn check_reference_target(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let (Some(r), Some(target)) = (&f.reference, f.ref_target()) else {
            continue;
        };
        if r.malformed || !reference_shape_fits(f, r) || f.is_id() {
            continue;
        }
        if let Some(what) = plain_value_type(target) {
            cx.error_spanned_by(
                target,
                format!("a reference targets a model (a struct that derives `Model`, stored in its own collection), and {what}: store the value itself without `Ref` and without `#[reference]`"),
            );
        }
    }
}

/// A `Ref<T>` on a model is managed by the ODM only with `#[reference]` or `#[parent]`:
/// without one it would be stored, but have no index, no delete rule, no two-way update and
/// no populate. The syntax is enough to tell (`Ref<T>`, also `odm::Ref<T>`, inside `Option`
/// or `Vec`); a plain id (`author_id: ObjectId`) is the way to keep an id the ODM ignores.
fn check_ref_has_attribute(cx: &Ctxt, cont: &Container<'_>) {
    if cont.derive != Derive::Model {
        return;
    }
    for f in &cont.fields {
        // The id and copies have rules of their own; a skipped field is never stored.
        if f.reference.is_some() || f.denormalize.is_some() || f.is_id() || f.skipped {
            continue;
        }
        // A tree's parent and ancestors are the tree's.
        if !mentions_ref(f.ty) || super::tree::ref_rule_exempt(cont, f) {
            continue;
        }
        let attr = match f.shape {
            Shape::Vec(_) => "`#[reference(many, max = N)]`",
            _ => "`#[reference]` (or `#[parent]` on a child's reference to its parent)",
        };
        cx.error_spanned_by(
            f.ty,
            format!("a `Ref` field needs {attr}: without it the ODM does not index it, apply a delete rule or populate it. To keep an id the ODM ignores, store the id itself (`{}_id: ObjectId`)", f.ident.unraw()),
        );
    }
}

/// Whether `Ref<..>` appears anywhere in the type (by the last path segment).
fn mentions_ref(ty: &Type) -> bool {
    match ty {
        Type::Path(tp) => tp.path.segments.iter().any(|seg| {
            let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
                return false;
            };
            (seg.ident == "Ref" && args.args.len() == 1)
                || args
                    .args
                    .iter()
                    .any(|a| matches!(a, syn::GenericArgument::Type(t) if mentions_ref(t)))
        }),
        Type::Paren(p) => mentions_ref(&p.elem),
        Type::Group(g) => mentions_ref(&g.elem),
        Type::Array(a) => mentions_ref(&a.elem),
        Type::Tuple(t) => t.elems.iter().any(mentions_ref),
        _ => false,
    }
}

/// A field is embedded or referenced, not both; a reference is stored.
fn check_reference_alone(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        if f.embed.is_some() {
            cx.error_spanned_by(
                &r.tokens,
                "a field is either embedded or referenced: remove `#[embed]` or the reference",
            );
        }
        if f.skipped {
            cx.error_spanned_by(
                &r.tokens,
                "this field is skipped by serde, so the reference is never stored",
            );
        }
    }
}

/// `_id` is the document's own value, never a reference to another document. (In an
/// embedded summary a `Ref` stored as `_id` names the summarized source: allowed there.)
fn check_id_not_a_reference(cx: &Ctxt, cont: &Container<'_>) {
    if matches!(cont.derive, Derive::Embed) {
        return;
    }
    for f in cont.fields.iter().filter(|f| f.is_id()) {
        const MESSAGE: &str = "`_id` cannot be a reference: it is the document's own id. To share another document's id (one-to-one), declare its id type here (`id: ObjectId`) and store the same value";
        match &f.reference {
            Some(r) => cx.error_spanned_by(&r.tokens, MESSAGE),
            None if f.ref_target().is_some() => cx.error_spanned_by(f.ty, MESSAGE),
            None => {}
        }
    }
}

/// Arrays must not grow without bound (rule of thumb 3): an embedded array and an array of
/// references declare `max = N`, at most a couple of hundred embedded documents or a few
/// thousand ids unless `allow_large` states why; `max` only bounds arrays.
fn check_bounded_arrays(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        // A misdeclared field is reported by its own rule; its bound would only add noise.
        // A copy that is also embedded or a reference is reported by `check_copy_alone`.
        // A bucket's items are bounded by the bucket (`max`, or its period).
        if f.denormalize.is_some() || super::bucket::is_items(cont, f) {
            continue;
        }
        let (tokens, bound, limit, kind, embedded) = match (&f.embed, &f.reference) {
            (Some(e), _) if e.malformed || embed_type_problem(f).is_some() => continue,
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

/// `nullify` clears an optional reference; `pull` removes an id from an array.
fn check_delete_rule_fits(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        let Some((rule, span)) = r.on_delete else {
            continue;
        };
        // A field of the wrong type is reported by its own rule.
        if !reference_shape_fits(f, r) {
            continue;
        }
        match (rule, f.shape) {
            (OnDelete::Nullify, Shape::Option(_)) | (OnDelete::Pull, Shape::Vec(_)) => {}
            (OnDelete::Nullify, Shape::Vec(_)) => cx.error_at(span, "`nullify` sets a single reference to null; to remove the id from an array of references, use `on_delete = \"pull\"`"),
            (OnDelete::Nullify, _) => cx.error_at(span, "`nullify` sets the reference to null, which needs an `Option<Ref<T>>` field (or use `cascade` or `restrict`)"),
            (OnDelete::Pull, _) => cx.error_at(span, "`pull` removes an id from an array; this field holds one reference (use `nullify` on an `Option`, or `cascade` or `restrict`)"),
            _ => {}
        }
    }
}

/// A two-way reference pairs an array on the "one" side (`#[reference(many, inverse)]`) with a
/// single reference on the "many" side (`#[parent(inverse)]`); a single `#[reference]` has no
/// inverse.
fn check_inverse_side(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        if let (Some(lit), false, None, false) = (&r.inverse, r.parent, r.many, r.malformed) {
            cx.error_spanned_by(
                lit,
                "a two-way reference is an array on one side and a `#[parent]` on the other: use `#[reference(many, inverse = ...)]` here, or `#[parent(inverse = ...)]` on a child",
            );
        }
    }
}

/// A Model has exactly one `_id` field; an Embed type has none (it is not a document of its own).
fn check_id(cx: &Ctxt, cont: &Container<'_>) {
    let ids: Vec<_> = cont.fields.iter().filter(|f| f.is_id()).collect();
    match cont.derive {
        Derive::Model => {
            if ids.is_empty() {
                cx.error_spanned_by(
                    cont.ident,
                    format!(
                        "`{}` has no `_id` field: add one, e.g. `#[serde(rename = \"_id\")] id: ObjectId`",
                        cont.ident
                    ),
                );
            }
            for extra in ids.iter().skip(1) {
                cx.error_spanned_by(
                    extra.ident,
                    "a second field is stored as `_id`; a document has one id",
                );
            }
            for id in &ids {
                if id.skipped {
                    cx.error_spanned_by(id.ident, "the `_id` field cannot be skipped by serde: every document is stored with its id");
                }
            }
        }
        Derive::Embed => {
            // A `Ref` stored as `_id` is the source a latest-N summary stands for (each stored
            // summary carries it), not an identity of the embedded document's own.
            for id in ids.into_iter().filter(|f| f.ref_target().is_none()) {
                cx.error_spanned_by(
                    id.ident,
                    "an embedded document has no `_id` of its own: something with an identity of its own is a Model, referenced rather than embedded (rule of thumb 2); rename the field, or derive only `Model` on this type (a type cannot be both)",
                );
            }
        }
    }
}

/// A collection name is non-empty, has no `$` or NUL, and is not in the `system.` namespace.
fn check_collection_name(cx: &Ctxt, cont: &Container<'_>) {
    if let Some(lit) = &cont.collection {
        let name = lit.value();
        let problem = if name.is_empty() {
            Some("is empty")
        } else if name.contains('$') {
            Some("contains `$`")
        } else if name.contains('\0') {
            Some("contains a NUL character")
        } else if name.starts_with("system.") {
            Some("is in the reserved `system.` namespace")
        } else {
            None
        };
        if let Some(problem) = problem {
            cx.error_spanned_by(lit, format!("invalid collection name: it {problem}"));
        }
    }
}

/// `_id` always has its own unique index; declaring another one is a mistake.
fn check_index_not_on_id(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        if let (true, Some(index)) = (f.is_id(), &f.index) {
            cx.error_spanned_by(
                &index.tokens,
                "`_id` is always indexed (and unique); remove this `#[index]`",
            );
        }
    }
}

/// Index options that cannot go together: a text index is neither unique nor descending;
/// a unique index on an `Option` field already leaves absent values out, so `sparse` would
/// conflict with the partial filter it uses; a TTL index is a plain single-field index.
fn check_index_options(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(index) = &f.index else { continue };
        if let Some(text) = index.text {
            if index.unique.is_some() {
                cx.error_at(text, "a text index cannot be unique");
            }
            if index.desc.is_some() {
                cx.error_at(text, "a text index has no direction; remove `desc`");
            }
            if let Some((_, span)) = index.expire_after_secs {
                cx.error_at(span, "a text index cannot expire documents");
            }
        }
        if let (Some(sparse), Some(_), Shape::Option(_)) = (index.sparse, index.unique, f.shape) {
            cx.error_at(
                sparse,
                "a unique index on an `Option` field already leaves out documents without a value (a partial index); remove `sparse`",
            );
        }
        if f.skipped {
            cx.error_spanned_by(
                &index.tokens,
                "this field is skipped by serde, so it is never stored: it cannot be indexed",
            );
        }
    }
    for idx in &cont.compound_indexes {
        if let (Some(text), Some(_)) = (idx.text, idx.unique) {
            cx.error_at(text, "a text index cannot be unique");
        }
        if idx.text.is_some() && idx.keys.iter().any(|k| k.desc) {
            if let Some(lit) = &idx.keys_lit {
                cx.error_spanned_by(lit, "a text index has no direction; remove the `-`");
            }
        }
    }
}

/// A TTL index (`expire_after_secs`) deletes a document once the date in the field is that
/// old; MongoDB silently never expires a document whose field holds anything but a date (or
/// an array of dates). The syntax tells: the field's type is `DateTime` (`bson::DateTime`),
/// or an `Option` or `Vec` of it.
fn check_expiring_index_on_date(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(index) = &f.index else { continue };
        let Some((_, span)) = index.expire_after_secs else {
            continue;
        };
        if index.text.is_some() || f.skipped || f.is_id() {
            continue;
        }
        let inner = f.inner_ty();
        let is_date = matches!(inner, Type::Path(tp) if tp.path.segments.last().is_some_and(|s| s.ident == "DateTime"));
        if !is_date {
            let ty = quote::quote!(#inner).to_string().replace(' ', "");
            cx.error_at(
                span,
                format!("a TTL index expires documents by a date, and `{}` holds `{ty}`: MongoDB never expires a document whose field is not a date. Store the time as `bson::DateTime` (or an `Option` of one)", f.ident.unraw()),
            );
        }
    }
}

/// A collection has at most one text index.
fn check_one_text_index(cx: &Ctxt, cont: &Container<'_>) {
    let field_text = cont
        .fields
        .iter()
        .filter_map(|f| f.index.as_ref().and_then(|i| i.text));
    let compound_text = cont.compound_indexes.iter().filter_map(|i| i.text);
    for extra in field_text.chain(compound_text).skip(1) {
        cx.error_at(
            extra,
            "a collection has at most one text index; index several fields in one: `#[odm(index(keys = \"title, summary\", text))]`",
        );
    }
}

/// Every key of a compound index names a stored field of the struct; a dotted key goes
/// through an `#[embed]` field (the rest of the path is checked by the compiler against the
/// embedded type).
fn check_compound_keys(cx: &Ctxt, cont: &Container<'_>) {
    for idx in &cont.compound_indexes {
        let Some(lit) = &idx.keys_lit else { continue };
        for key in &idx.keys {
            let first = &key.segments[0];
            match cont.field_named(first) {
                None => {
                    let known: Vec<String> = cont
                        .stored_fields()
                        .map(|f| f.ident.unraw().to_string())
                        .collect();
                    // The suggestion is the whole string, corrected, in its quotes.
                    let hint = closest(first, &known)
                        .map(|near| {
                            let fixed = lit.value().replacen(first.as_str(), near, 1);
                            format!("; did you mean `{near}`? `keys = \"{fixed}\"`")
                        })
                        .unwrap_or_default();
                    cx.error_spanned_by(
                        lit,
                        format!(
                            "no field `{first}` in `{}`{hint} (fields: {})",
                            cont.ident,
                            known.join(", ")
                        ),
                    );
                }
                Some(f) if f.skipped => {
                    cx.error_spanned_by(lit, format!("field `{first}` is skipped by serde, so it is never stored: it cannot be indexed"));
                }
                Some(f) if key.segments.len() > 1 && f.embed.is_none() => {
                    cx.error_spanned_by(
                        lit,
                        format!("`{}` goes through `{first}`, which is not an `#[embed]` field: dotted keys reach into embedded documents", key.segments.join(".")),
                    );
                }
                Some(_) => {}
            }
        }
    }
}

/// An `#[embed]` field is stored: serde must not skip it.
fn check_embed_not_skipped(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        if let (Some(embed), true) = (&f.embed, f.skipped) {
            cx.error_spanned_by(&embed.tokens, "this field is skipped by serde, so nothing is embedded; remove `#[embed]` or the skip");
        }
    }
}

/// A compound index names each field once (MongoDB keeps only the last of two equal keys).
fn check_compound_keys_distinct(cx: &Ctxt, cont: &Container<'_>) {
    for idx in &cont.compound_indexes {
        let Some(lit) = &idx.keys_lit else { continue };
        for (i, key) in idx.keys.iter().enumerate() {
            if idx.keys[..i].iter().any(|k| k.segments == key.segments) {
                cx.error_spanned_by(
                    lit,
                    format!("`{}` appears twice in this index", key.segments.join(".")),
                );
            }
        }
    }
}

/// A compound index holds at most one array field: MongoDB cannot index parallel arrays and
/// rejects every document in which two indexed fields hold arrays.
fn check_compound_one_array(cx: &Ctxt, cont: &Container<'_>) {
    for idx in &cont.compound_indexes {
        let Some(lit) = &idx.keys_lit else { continue };
        let mut arrays: Vec<&str> = Vec::new();
        for key in &idx.keys {
            let first = key.segments[0].as_str();
            let is_array = cont.field_named(first).is_some_and(|f| match f.shape {
                Shape::Vec(_) => true,
                Shape::Option(inner) => matches!(shape_of(inner), Shape::Vec(_)),
                Shape::Plain => false,
            });
            if is_array && !arrays.contains(&first) {
                arrays.push(first);
            }
        }
        if arrays.len() > 1 {
            cx.error_spanned_by(
                lit,
                format!(
                    "a compound index can hold one array field, not {} (`{}`): MongoDB cannot index parallel arrays",
                    arrays.len(),
                    arrays.join("`, `")
                ),
            );
        }
    }
}

/// Two indexes of one model cannot be given the same name.
fn check_index_names_distinct(cx: &Ctxt, cont: &Container<'_>) {
    let field_names = cont
        .fields
        .iter()
        .filter_map(|f| f.index.as_ref()?.name.as_ref());
    let compound_names = cont.compound_indexes.iter().filter_map(|i| i.name.as_ref());
    let mut seen: Vec<String> = Vec::new();
    for name in field_names.chain(compound_names) {
        if seen.contains(&name.value()) {
            cx.error_spanned_by(
                name,
                format!(
                    "another index of `{}` is already named `{}`",
                    cont.ident,
                    name.value()
                ),
            );
        } else {
            seen.push(name.value());
        }
    }
}

/// `_id` is matched as a whole: it has no typed paths below it, so `#[embed]` cannot go on it.
fn check_embed_not_on_id(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        if let (Some(embed), true) = (&f.embed, f.is_id()) {
            cx.error_spanned_by(&embed.tokens, "`#[embed]` is not supported on `_id`: the id is matched as a whole; remove `#[embed]`");
        }
    }
}

/// `#[embed]` holds a struct deriving `Embed`, an `Option` of one or a `Vec` of one: not a
/// plain value (those need no attribute) and not two wrappers deep. Other types are left to
/// the compiler, which reports a missing `Embed` impl at the type.
fn check_embed_type(cx: &Ctxt, cont: &Container<'_>) {
    // A copy that is also embedded is reported by `check_copy_alone`.
    for f in cont
        .fields
        .iter()
        .filter(|f| f.embed.is_some() && f.denormalize.is_none())
    {
        if let Some((culprit, message)) = embed_type_problem(f) {
            cx.error_spanned_by(culprit, message);
        }
    }
}

/// Why the type of a field cannot hold an embedded document, when that is certain from the
/// syntax: the type to point at and the message. Also used by the stub, which gives such a
/// field a plain accessor so that the error is not repeated by the compiler.
pub fn embed_type_problem<'a>(f: &Field<'a>) -> Option<(&'a Type, String)> {
    let inner = f.inner_ty();
    if !matches!(shape_of(inner), Shape::Plain) {
        return Some((
            f.ty,
            "`#[embed]` supports `T`, `Option<T>` and `Vec<T>` where `T` derives `Embed`, not a wrapper inside another; remove `#[embed]` to store the field without typed paths below it".to_owned(),
        ));
    }
    embed_type_problem_of(inner).map(|what| (
        inner,
        format!("`#[embed]` is for a struct that derives `Embed`, and {what}: remove `#[embed]` (plain values need no attribute)"),
    ))
}

/// What a type is, when the syntax shows it cannot be an embedded document: a plain value, a
/// tuple, an array, a reference, or a wrapper (`Option`, `Vec`) of another wrapper.
pub fn embed_type_problem_of(ty: &Type) -> Option<String> {
    if !matches!(shape_of(ty), Shape::Plain) {
        return Some("a wrapper inside another is not a struct".to_owned());
    }
    plain_value_type(ty)
}

/// What a type is, when it is certainly not an embedded document: a primitive, a string, a
/// BSON value, a collection other than `Vec`, a tuple, array or reference.
fn plain_value_type(ty: &Type) -> Option<String> {
    const PLAIN: &[&str] = &[
        "bool",
        "char",
        "str",
        "String",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "f32",
        "f64",
        "ObjectId",
        "DateTime",
        "Document",
        "Bson",
        "Uuid",
        "Decimal128",
        "Binary",
        "Timestamp",
        "Regex",
        "HashMap",
        "BTreeMap",
        "HashSet",
        "BTreeSet",
        "VecDeque",
    ];
    match ty {
        Type::Path(tp) if tp.qself.is_none() => {
            let name = tp.path.segments.last()?.ident.to_string();
            PLAIN
                .contains(&name.as_str())
                .then(|| format!("`{name}` is a plain value"))
        }
        Type::Paren(p) => plain_value_type(&p.elem),
        Type::Group(g) => plain_value_type(&g.elem),
        Type::Tuple(_) => Some("a tuple is not a struct".to_owned()),
        Type::Array(_) | Type::Slice(_) => Some("an array is not a struct".to_owned()),
        Type::Reference(_) | Type::Ptr(_) => Some("a reference is not a struct".to_owned()),
        _ => None,
    }
}

/// The candidate nearest to `name` by edit distance, when near enough to be a misspelling
/// (at most a third of the name's letters off, rounded up).
pub fn closest<'c>(name: &str, candidates: &'c [String]) -> Option<&'c str> {
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= name.chars().count().div_ceil(3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.as_str())
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
