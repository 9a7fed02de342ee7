//! Rules of declared indexes, single and compound.

use syn::ext::IdentExt;
use syn::Type;

use super::super::{shape_of, Container, Shape};
use super::closest;
use crate::ctxt::Ctxt;

/// `_id` always has its own unique index; declaring another one is a mistake.
pub(super) fn check_index_not_on_id(cx: &Ctxt, cont: &Container<'_>) {
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
pub(super) fn check_index_options(cx: &Ctxt, cont: &Container<'_>) {
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
pub(super) fn check_expiring_index_on_date(cx: &Ctxt, cont: &Container<'_>) {
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
pub(super) fn check_one_text_index(cx: &Ctxt, cont: &Container<'_>) {
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
pub(super) fn check_compound_keys(cx: &Ctxt, cont: &Container<'_>) {
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

/// A compound index names each field once (MongoDB keeps only the last of two equal keys).
pub(super) fn check_compound_keys_distinct(cx: &Ctxt, cont: &Container<'_>) {
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
pub(super) fn check_compound_one_array(cx: &Ctxt, cont: &Container<'_>) {
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
pub(super) fn check_index_names_distinct(cx: &Ctxt, cont: &Container<'_>) {
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
