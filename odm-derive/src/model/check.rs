//! Rules that involve more than one attribute, or an attribute and a field's type. One
//! function per rule, each stating it.

use syn::Type;

use super::{shape_of, Container, Derive, Field, Shape};
use crate::ctxt::Ctxt;

pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_id(cx, cont);
    check_collection_name(cx, cont);
    check_index_not_on_id(cx, cont);
    check_index_options(cx, cont);
    check_one_text_index(cx, cont);
    check_compound_keys(cx, cont);
    check_compound_keys_distinct(cx, cont);
    check_compound_one_array(cx, cont);
    check_index_names_distinct(cx, cont);
    check_embed_not_skipped(cx, cont);
    check_embed_not_on_id(cx, cont);
    check_embed_type(cx, cont);
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
            for id in ids {
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
                    let known: Vec<String> =
                        cont.stored_fields().map(|f| f.ident.to_string()).collect();
                    cx.error_spanned_by(
                        lit,
                        format!(
                            "no field `{first}` in `{}` (fields: {})",
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
    for f in cont.fields.iter().filter(|f| f.embed.is_some()) {
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
    let what = plain_value_type(inner)?;
    Some((
        inner,
        format!("`#[embed]` is for a struct that derives `Embed`, and {what}: remove `#[embed]` (plain values need no attribute)"),
    ))
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
