//! Parsing `#[odm(subset_of = "Movie")]`: this model holds the details of another, one
//! document each, under the same `_id` (the subset pattern; its rules are in `check::subset`).

use syn::meta::ParseNestedMeta;
use syn::{LitStr, Type};

use super::string_value;
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
