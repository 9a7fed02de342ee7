//! Rules that involve more than one attribute, or an attribute and a field's type. One
//! function per rule, each stating it.

mod bounds;
mod copies;
mod embeds;
mod identity;
mod indexes;
mod references;

pub use bounds::MAX_EMBEDDED;
pub use copies::{copy_kind, CopyKind};
pub use embeds::{embed_type_problem, embed_type_problem_of};

use super::Container;
use crate::ctxt::Ctxt;

pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    identity::check_id(cx, cont);
    super::versions::check(cx, cont);
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
    super::bucket::check(cx, cont);
    super::background::check(cx, cont);
    super::counters::check(cx, cont);
    super::tree::check(cx, cont);
    super::shard::check(cx, cont);
    super::subset::check(cx, cont);
    super::versioning::check(cx, cont);
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
