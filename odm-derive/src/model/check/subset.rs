//! The rules of `#[odm(subset_of = "Movie")]` (parsed in `attr::subset`).

use syn::Type;

use super::super::Container;
use crate::ctxt::Ctxt;

pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_not_itself(cx, cont);
    check_plain_model(cx, cont);
    check_top_descending(cx, cont);
}

/// `top = N` keeps the N highest by `sort`, highest first (the highest-rated comments of a
/// post): the order is descending, else it would be the N lowest, which `top` does not say.
fn check_top_descending(cx: &Ctxt, cont: &Container<'_>) {
    for d in cont.fields.iter().filter_map(|f| f.denormalize.as_ref()) {
        let (Some(_), Some(sort), false) = (d.top, &d.sort, d.malformed) else {
            continue;
        };
        let value = sort.value();
        if !value.starts_with('-') {
            cx.error_spanned_by(
                sort,
                format!("`top = N` keeps the N highest by `sort`, highest first: sort descending, `sort = \"-{value}\"`"),
            );
        }
    }
}

/// A model is not the details of itself: the pair is two collections.
fn check_not_itself(cx: &Ctxt, cont: &Container<'_>) {
    let Some((Type::Path(tp), lit)) = &cont.subset_of else {
        return;
    };
    if tp.path.is_ident(cont.ident) || tp.path.is_ident("Self") {
        cx.error_spanned_by(
            lit,
            format!("`{}` cannot hold its own details: `subset_of` names the main model, stored in another collection", cont.ident),
        );
    }
}

/// The details of a pair are plain documents of their own collection: not a kind stored in
/// another model's collection, a tree, buckets, counters or a time series, whose documents
/// are not one per entity.
fn check_plain_model(cx: &Ctxt, cont: &Container<'_>) {
    let Some((_, lit)) = &cont.subset_of else {
        return;
    };
    let other = [
        (cont.kind_of.is_some(), "kind_of"),
        (cont.tree.is_some(), "tree"),
        (cont.bucket.is_some(), "bucket"),
        (cont.counters.is_some(), "counters"),
        (cont.time_series.is_some(), "time_series"),
    ];
    for (_, key) in other.iter().filter(|(on, _)| *on) {
        cx.error_spanned_by(
            lit,
            format!("`subset_of` and `{key}` do not go together: the details of a subset pair are one document per main document, in a collection of their own"),
        );
    }
}
