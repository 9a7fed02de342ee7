//! `#[odm(subset_of = "Movie")]`: this model holds the details of another, one document each,
//! under the same `_id` (the subset pattern).

use syn::meta::ParseNestedMeta;
use syn::{LitStr, Type};

use super::syntax::string_value;
use super::Container;
use crate::ctxt::Ctxt;

/// Parses `subset_of = "Movie"` into `slot`, reporting a repeated key at its second occurrence.
pub fn parse(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    slot: &mut Option<(Type, LitStr)>,
) -> syn::Result<()> {
    let Some(lit) = string_value(cx, meta, "subset_of", "Movie")? else {
        return Ok(());
    };
    if slot.is_some() {
        cx.error_spanned_by(
            &meta.path,
            "duplicate odm attribute `subset_of`: a model is the details of one main model",
        );
        return Ok(());
    }
    match lit.parse::<syn::Path>() {
        Ok(path) => *slot = Some((Type::Path(syn::TypePath { qself: None, path }), lit)),
        Err(_) => cx.error_spanned_by(
            &lit,
            "`subset_of` names the main model whose details this model holds: `subset_of = \"Movie\"`",
        ),
    }
    Ok(())
}

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
