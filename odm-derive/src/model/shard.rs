//! The fields of a shard key as the rules and the expansion ask for them
//! (`#[odm(shard_key(...))]`: parsed in `attr::shard`, checked in `check::shard`).

use syn::ext::IdentExt;

use super::{Container, Field, Shape};

/// The field a name of the key names: `_id` is the id field; for a dotted name (`meta.host`),
/// the embedded field it starts with.
pub fn field_for<'c, 'a>(cont: &'c Container<'a>, name: &str) -> Option<&'c Field<'a>> {
    let first = name.split('.').next().unwrap_or(name);
    if first == "_id" {
        cont.id_field()
    } else {
        cont.field_named(first)
    }
}

/// Whether a dotted key name (`meta.host`) names a field of an embedded document the derive
/// can check: two segments, through a single `#[embed]` field.
pub fn reaches_into_embed(f: &Field<'_>, name: &str) -> bool {
    name.split('.').count() == 2 && f.has_embed_paths() && !matches!(f.shape, Shape::Vec(_))
}

/// Whether typed updates may not write `f`: a field of a key declared without `mutable`, or
/// the field the ODM fills.
pub fn is_fixed_key_field(cont: &Container<'_>, f: &Field<'_>) -> bool {
    let Some(shard) = &cont.shard_key else {
        return false;
    };
    let name = f.ident.unraw().to_string();
    let filled = shard.fill.as_ref().is_some_and(|l| l.value() == name);
    // A dotted key (`meta.host`) fixes the embedded field, and every path below it.
    let in_key = shard
        .names()
        .iter()
        .any(|n| n.split('.').next() == Some(name.as_str()));
    filled || (shard.mutable.is_none() && !f.is_id() && in_key)
}
