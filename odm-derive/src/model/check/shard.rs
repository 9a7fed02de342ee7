//! The rules a shard key must follow (`#[odm(shard_key(...))]`, parsed in `attr::shard`).

use syn::ext::IdentExt;
use syn::LitStr;

use super::super::attr::ShardAttr;
use super::super::shard::field_for;
use super::super::{Container, Derive, Field, Shape};
use crate::ctxt::Ctxt;

/// The rules of a shard key.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    let Some(shard) = &cont.shard_key else { return };
    if cont.derive != Derive::Model {
        return;
    }
    if let Some((_, lit)) = &cont.kind_of {
        cx.error_spanned_by(
            lit,
            "a shard key is declared on a model of its own collection; a kind of a polymorphic model shares its base's collection",
        );
        return;
    }
    let Some(keys) = &shard.keys else {
        cx.error_at(
            shard.span,
            "a shard key names its fields: `shard_key(keys = \"category\")` or `shard_key(keys = \"host, time\")`",
        );
        return;
    };
    check_key_fields(cx, cont, shard, keys);
    check_options_name_keys(cx, cont, shard);
    check_unique_indexes_start_with_key(cx, cont, shard);
    check_upserts_name_key(cx, cont, shard, keys);
}

/// A bucket's add and a counter's event upsert by the fields that find their document (the
/// bucket's `key` and `period`, the counter's `key` and `day`): the first write of a bucket or
/// a day creates the document, which a sharded cluster refuses without its full shard key.
fn check_upserts_name_key(cx: &Ctxt, cont: &Container<'_>, shard: &ShardAttr, keys: &LitStr) {
    let (what, first, by): (&str, &str, Vec<String>) = match (&cont.bucket, &cont.counters) {
        (Some(b), _) => (
            "a bucket's add upserts by its `key` and `period`",
            "the first add to a bucket",
            [&b.key, &b.period]
                .into_iter()
                .flatten()
                .map(LitStr::value)
                .collect(),
        ),
        (None, Some(c)) => (
            "a counter's event upserts by its `key` and `day`",
            "the first event of a day",
            [&c.key, &c.day]
                .into_iter()
                .flatten()
                .map(LitStr::value)
                .collect(),
        ),
        (None, None) => return,
    };
    for name in shard.names() {
        if by.contains(&name) {
            continue;
        }
        let suggestion = match by.first() {
            Some(key) => format!(
                "`shard_key(keys = \"{key}\")` or `shard_key(keys = \"{}\")`",
                by.join(", ")
            ),
            None => String::new(),
        };
        cx.error_spanned_by(
            keys,
            format!(
                "`{name}` cannot be in the shard key of `{}`: {what} ({}), so {first} would create a document without `{name}`, which a sharded cluster refuses; shard by those fields instead, e.g. {suggestion}",
                cont.ident,
                by.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "),
            ),
        );
    }
}

/// Each key names a stored field of the struct, once, that the ODM does not rewrite.
fn check_key_fields(cx: &Ctxt, cont: &Container<'_>, shard: &ShardAttr, keys: &LitStr) {
    let names = shard.names();
    if names.is_empty() {
        cx.error_spanned_by(
            keys,
            "a shard key names at least one field: `keys = \"category\"`",
        );
    }
    let known: Vec<String> = cont
        .stored_fields()
        .map(|f| f.ident.unraw().to_string())
        .collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            cx.error_spanned_by(keys, format!("`{name}` appears twice in the shard key"));
            continue;
        }
        let first = name.split('.').next().unwrap_or(name);
        let Some(f) = field_for(cont, name) else {
            let hint = super::closest(first, &known)
                .map(|near| format!("; did you mean `{near}`?"))
                .unwrap_or_default();
            cx.error_spanned_by(
                keys,
                format!(
                    "`{}` has no field `{first}` to shard by{hint} (a shard key names fields of the struct, `_id`, or a field of an embedded document: `meta.host`)",
                    cont.ident
                ),
            );
            continue;
        };
        if name.contains('.') && !dotted_key_reaches_embed(cx, keys, f, name) {
            continue;
        }
        if !name.contains('.') && matches!(f.shape, Shape::Vec(_)) {
            cx.error_spanned_by(
                keys,
                format!("`{name}` is an array, and MongoDB refuses a shard key on an array field: shard by a field holding one value"),
            );
            continue;
        }
        if f.skipped {
            cx.error_spanned_by(
                keys,
                format!("`{name}` is not stored (serde skips it): it cannot be a shard key"),
            );
        } else if f.denormalize.is_some() {
            cx.error_spanned_by(
                keys,
                format!("`{name}` is a denormalized copy, rewritten by odm whenever its source changes, which would move the document between shards without saying so: shard by a field of this model's own"),
            );
        } else if super::super::tree::is_tree_field(cont, f) {
            cx.error_spanned_by(
                keys,
                format!("`{name}` is a tree's parent or ancestors, rewritten by odm when a subtree moves, which would move the documents between shards without saying so: shard by a field of this model's own"),
            );
        }
    }
}

/// A dotted key name reaches one level into a single embedded document (`meta.host`, `meta`
/// an `#[embed]` field); the embedded field itself is checked by the generated code, against
/// the embedded type's fields. Reports what it is not.
fn dotted_key_reaches_embed(cx: &Ctxt, keys: &LitStr, f: &Field<'_>, name: &str) -> bool {
    let first = name.split('.').next().unwrap_or(name);
    let problem = if name.split('.').any(str::is_empty) {
        Some(format!(
            "`{name}` has an empty segment: write the path as `field.subfield`"
        ))
    } else if name.split('.').count() > 2 {
        Some(format!("`{name}` reaches more than one level into embedded documents: a shard key names a field of the struct or of a document it embeds (`{first}.field`)"))
    } else if f.is_id() || !f.has_embed_paths() {
        Some(format!("`{name}` goes through `{first}`, which is not an `#[embed]` field: a dotted shard key names a field of an embedded document"))
    } else if matches!(f.shape, Shape::Vec(_)) {
        Some(format!("`{first}` is an array of embedded documents, and MongoDB refuses a shard key inside an array: shard by a field of a single embedded document"))
    } else {
        None
    };
    if let Some(problem) = &problem {
        cx.error_spanned_by(keys, problem);
    }
    problem.is_none()
}

/// `hashed` and `fill` name a field of the key; `fill` comes with `month` and `hash`, which
/// name stored fields.
fn check_options_name_keys(cx: &Ctxt, cont: &Container<'_>, shard: &ShardAttr) {
    let names = shard.names();
    for (lit, key) in [(&shard.hashed, "hashed"), (&shard.fill, "fill")] {
        if let Some(lit) = lit {
            if !names.contains(&lit.value()) {
                cx.error_spanned_by(
                    lit,
                    format!(
                        "`{key}` names one of the shard key's fields ({})",
                        names.join(", ")
                    ),
                );
            } else if key == "fill" && lit.value() == "_id" {
                cx.error_spanned_by(
                    lit,
                    "odm does not compute `_id`: fill another field of the key",
                );
            } else if key == "fill" && lit.value().contains('.') {
                cx.error_spanned_by(
                    lit,
                    "odm fills a field of the struct itself, not one inside an embedded document",
                );
            }
        }
    }
    match (&shard.fill, &shard.month, &shard.hash) {
        (Some(_), Some(_), Some(_)) | (None, None, None) => {}
        (Some(fill), _, _) => cx.error_spanned_by(
            fill,
            "a filled key is `<month of a date field>-<md5 of a field>`: give both `month = \"...\"` and `hash = \"...\"`",
        ),
        (None, month, hash) => {
            if let Some(lit) = month.as_ref().or(hash.as_ref()) {
                cx.error_spanned_by(lit, "`month` and `hash` say how `fill` computes a key field: name it with `fill = \"...\"`");
            }
        }
    }
    for lit in [&shard.month, &shard.hash].into_iter().flatten() {
        let name = lit.value();
        if field_for(cont, &name).is_none_or(|f| f.skipped) {
            cx.error_spanned_by(
                lit,
                format!("`{}` has no stored field `{name}`", cont.ident),
            );
        }
    }
}

/// A unique index starts with the shard key: each shard can only check uniqueness among its
/// own documents, so MongoDB refuses any other unique index on a sharded collection.
fn check_unique_indexes_start_with_key(cx: &Ctxt, cont: &Container<'_>, shard: &ShardAttr) {
    let key = shard.names();
    if key.is_empty() {
        return;
    }
    let starts = |index: &[String]| index.len() >= key.len() && index[..key.len()] == key[..];
    let message = |what: &str| {
        format!(
            "a unique index on a sharded collection must start with the shard key ({}): each shard can only enforce uniqueness among its own documents; {what}",
            key.join(", ")
        )
    };
    for f in cont.stored_fields() {
        if let Some(index) = f.index.as_ref().filter(|i| i.unique.is_some()) {
            if !starts(&[f.ident.unraw().to_string()]) {
                cx.error_spanned_by(
                    &index.tokens,
                    message(&format!(
                        "declare `#[odm(index(keys = \"{}, {}\", unique))]` instead",
                        key.join(", "),
                        f.ident.unraw()
                    )),
                );
            }
        }
    }
    for index in cont.compound_indexes.iter().filter(|i| i.unique.is_some()) {
        let keys: Vec<String> = index.keys.iter().map(|k| k.segments.join(".")).collect();
        if !starts(&keys) {
            let at = index.keys_lit.as_ref().map_or(index.span, LitStr::span);
            cx.error_at(at, message("put the shard key's fields first"));
        }
    }
}
