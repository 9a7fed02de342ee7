//! Rules that involve more than one attribute, or an attribute and a field's type. One
//! function per rule, each stating it.

mod background;
mod bounds;
mod bucket;
mod copies;
mod counters;
mod defaults;
mod embeds;
mod identity;
mod index_options;
mod indexes;
mod kinds;
mod poly;
mod references;
mod shard;
mod soft_delete;
mod subset;
mod tree;
mod versioning;
mod versions;

pub use bounds::MAX_EMBEDDED;

pub use super::syntax::closest;
use syn::DeriveInput;

use super::resolved::Checked;
use super::{Container, Declaration};
use crate::ctxt::Ctxt;

/// Runs every rule on the declaration `decl` (read from `input`), reporting into `cx`;
/// returns what they resolved.
pub fn check<'c, 'a>(cx: &Ctxt, input: &DeriveInput, decl: &'c Declaration<'a>) -> Checked<'c, 'a> {
    match decl {
        Declaration::Struct(cont) => check_struct(cx, cont),
        Declaration::Kinds(kinds) => {
            kinds::check(cx, input, kinds);
            Checked::default()
        }
        Declaration::Poly(poly) => {
            poly::check(cx, poly);
            Checked::default()
        }
    }
}

/// The rules of a struct deriving `Model` or `Embed`.
fn check_struct<'c, 'a>(cx: &Ctxt, cont: &'c Container<'a>) -> Checked<'c, 'a> {
    identity::check_id(cx, cont);
    versions::check(cx, cont);
    identity::check_collection_name(cx, cont);
    indexes::check_index_not_on_id(cx, cont);
    indexes::check_index_options(cx, cont);
    indexes::check_expiring_index_on_date(cx, cont);
    indexes::check_one_text_index(cx, cont);
    indexes::check_compound_keys(cx, cont);
    indexes::check_compound_keys_distinct(cx, cont);
    indexes::check_compound_one_array(cx, cont);
    indexes::check_index_names_distinct(cx, cont);
    embeds::check_embed_not_skipped(cx, cont);
    embeds::check_embed_not_on_id(cx, cont);
    embeds::check_embed_type(cx, cont);
    references::check_reference_shape(cx, cont);
    references::check_dbref_references(cx, cont);
    references::check_reference_target(cx, cont);
    references::check_ref_has_attribute(cx, cont);
    references::check_reference_alone(cx, cont);
    references::check_id_not_a_reference(cx, cont);
    bounds::check_bounded_arrays(cx, cont);
    references::check_delete_rule_fits(cx, cont);
    references::check_inverse_side(cx, cont);
    copies::check_copy_names_source(cx, cont);
    copies::check_copy_alone(cx, cont);
    copies::check_summary_type(cx, cont);
    copies::check_flat_copy(cx, cont);
    copies::check_latest_copy(cx, cont);
    copies::check_sort_with_latest(cx, cont);
    copies::check_sort_key_copied(cx, cont);
    copies::check_copy_bounds(cx, cont);
    copies::check_frequently_updated(cx, cont);
    let bucket = bucket::check(cx, cont);
    background::check(cx, cont);
    counters::check(cx, cont);
    tree::check(cx, cont);
    shard::check(cx, cont);
    subset::check(cx, cont);
    soft_delete::check(cx, cont);
    index_options::check(cx, cont);
    defaults::check(cx, cont);
    versioning::check(cx, cont);
    Checked { bucket }
}
