//! Copies written by updates: summaries pushed or set, references a copy follows.
//!
//! An update of a dependent may write whole summaries (`$push` of a `PartSummary`, `$set` of
//! an `author` summary) or the reference a flat copy follows (`$set` of `product`). The copied
//! fields are taken from the sources before the update is sent, whatever the caller put in
//! them, so that a copy never starts out different from its source. Paths inside a copy are
//! refused: they are written by the cascade of the source, never by hand.

use bson::{Bson, Document};
use mongodb::ClientSession;

use super::fill::Wanted;
use super::settle::Taken;
use super::{CopyInfo, CopyKind};
use crate::{Error, Odm, Result};

/// Which documents of a collection a write reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writes {
    /// A model of its own collection.
    Model,
    /// One kind of a polymorphic model.
    Kind(crate::kind::Kind),
    /// The base of a polymorphic model: documents of every kind.
    Base,
}

impl Writes {
    pub(crate) fn of<T: crate::Model>() -> Self {
        match (T::entry().kind, T::entry().kinds) {
            (Some(kind), _) => Writes::Kind(kind),
            (None, Some(_)) => Writes::Base,
            (None, None) => Writes::Model,
        }
    }
}

/// The operators whose values may hold whole summaries.
const SUMMARY_OPS: [&str; 4] = ["$set", "$setOnInsert", "$push", "$addToSet"];
/// The operators that may set the reference a flat copy follows.
const VIA_OPS: [&str; 2] = ["$set", "$setOnInsert"];

/// Whether `rest` (what follows an array path) addresses one element: `.3`, `.$`, `.$[]`,
/// `.$[name]`.
fn is_element(rest: &str) -> bool {
    let Some(segment) = rest.strip_prefix('.') else {
        return false;
    };
    segment.parse::<u64>().is_ok()
        || segment == "$"
        || (segment.starts_with("$[") && segment.ends_with(']') && !segment.contains('.'))
}

/// Calls `f` on every whole summary of `copy` the update writes.
fn each_summary(update: &mut Document, copy: &CopyInfo, f: &mut dyn FnMut(&mut Document)) {
    let CopyKind::Summary { array, .. } = &copy.kind else {
        return;
    };
    for op in SUMMARY_OPS {
        let Some(Bson::Document(fields)) = update.get_mut(op) else {
            continue;
        };
        let appends = op == "$push" || op == "$addToSet";
        for (key, value) in fields.iter_mut() {
            let element = match key.strip_prefix(copy.path.as_str()) {
                Some("") => false,
                Some(rest) if *array && is_element(rest) => true,
                _ => continue,
            };
            match value {
                Bson::Document(d) if *array && !element && appends => match d.get_mut("$each") {
                    Some(Bson::Array(items)) => items
                        .iter_mut()
                        .filter_map(Bson::as_document_mut)
                        .for_each(&mut *f),
                    _ => f(d),
                },
                Bson::Document(d) => f(d),
                Bson::Array(items) if *array && !element => items
                    .iter_mut()
                    .filter_map(Bson::as_document_mut)
                    .for_each(&mut *f),
                _ => {}
            }
        }
    }
}

/// The reference a flat copy follows, as the update writes it: the operator and the new id
/// (`None` when it is unset or set to null).
fn via_written<'u>(update: &'u Document, via: &str) -> Option<(&'static str, Option<&'u Bson>)> {
    for op in VIA_OPS {
        if let Some(v) = update.get_document(op).ok().and_then(|f| f.get(via)) {
            return Some((op, Some(v).filter(|v| **v != Bson::Null)));
        }
    }
    update
        .get_document("$unset")
        .ok()
        .filter(|f| f.contains_key(via))
        .map(|_| ("$unset", None))
}

/// Refuses an update that writes inside a copy: a copied field or the id of a summary, a flat
/// copy, or a latest-N array. Every path an operator names is a write (`$set`, `$unset`,
/// `$inc`, `$push`, `$setOnInsert`, `$currentDate`, ...), and so is the new name of a `$rename`.
fn refuse_copy_writes(collection: &str, update: &Document, copies: &[CopyInfo]) -> Result<()> {
    let under = |key: &str, path: &str| {
        key == path
            || key
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with('.'))
    };
    // A `$rename` also writes its new name, all of it: renaming onto a summary array would
    // bring in summaries that were never taken from their sources.
    let renamed_to = update
        .get_document("$rename")
        .into_iter()
        .flat_map(|f| f.values().filter_map(Bson::as_str))
        .map(|to| (to, true));
    let paths = update
        .values()
        .filter_map(Bson::as_document)
        .flat_map(|fields| fields.keys().map(|k| (k.as_str(), false)))
        .chain(renamed_to);
    for (key, whole) in paths {
        for copy in copies {
            let written = match &copy.kind {
                _ if whole => under(key, &copy.path) || under(&copy.path, key),
                CopyKind::Flat { .. } | CopyKind::Latest { .. } => under(key, &copy.path),
                CopyKind::Summary { array, id, .. } => {
                    let inside = key
                        .strip_prefix(copy.path.as_str())
                        .and_then(|rest| rest.strip_prefix('.'));
                    let inside = match inside {
                        // `parts.$[p].name`: drop the element segment.
                        Some(rest) if *array => rest
                            .split_once('.')
                            .filter(|(element, _)| is_element(&format!(".{element}")))
                            .map(|(_, below)| below),
                        other => other,
                    };
                    inside.is_some_and(|inner| {
                        std::iter::once(id.as_str())
                            .chain(copy.fields.iter().map(|(_, to)| to.as_str()))
                            .any(|copied| under(inner, copied) || under(copied, inner))
                    })
                }
            };
            if written {
                return Err(Error::CopyWrite {
                    collection: collection.to_owned(),
                    path: key.to_owned(),
                    copied_from: copy.source.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Takes the copies an update of `collection` writes from their sources: every whole summary
/// it sets or pushes, and every flat copy whose reference it sets. A caller's update
/// (`checked`: typed or raw alike) that writes inside a copy is refused with
/// [`Error::CopyWrite`].
///
/// Commands: one `find` per source collection the update copies from; none when it writes no
/// copy.
///
/// `writes` says which documents of the collection the update reaches: a kind's update takes
/// only the copies that kind (or every document) keeps; an update through the base of kinds
/// that would write the copy of one kind is refused, since it reaches documents of every kind.
pub(crate) async fn fill_update(
    odm: &Odm,
    collection: &str,
    writes: Writes,
    update: &mut Document,
    checked: bool,
    session: Option<&mut ClientSession>,
) -> Result<Taken> {
    let mut copies = odm.catalog().copies_into(collection).to_vec();
    if let Writes::Kind(kind) = writes {
        copies.retain(|c| c.dependent_kind.is_none_or(|k| k == kind));
    }
    if copies.is_empty() {
        return Ok(Taken::default());
    }
    if checked {
        refuse_copy_writes(collection, update, &copies)?;
    }
    let mut ids: Vec<(usize, Bson)> = Vec::new();
    for (i, copy) in copies.iter().enumerate() {
        match &copy.kind {
            CopyKind::Summary { id, .. } => each_summary(update, copy, &mut |s| {
                if let Some(sid) = s.get(id) {
                    ids.push((i, sid.clone()));
                }
            }),
            CopyKind::Flat { via } => {
                if let Some((_, Some(sid))) = via_written(update, via) {
                    ids.push((i, sid.clone()));
                }
            }
            CopyKind::Latest { .. } => {}
        }
    }
    if writes == Writes::Base {
        let kinds_copy = copies.iter().find(|c| {
            c.dependent_kind.is_some()
                && (ids.iter().any(|(i, _)| std::ptr::eq(&copies[*i], *c))
                    || matches!(&c.kind, CopyKind::Flat { via } if via_written(update, via).is_some()))
        });
        if let Some(c) = kinds_copy {
            return Err(Error::Unsupported(format!(
                "this update of `{collection}` through the base of its kinds writes what the copy `{}` of `{}` follows, which only that kind keeps: update it through `{}`, so that the copy is taken on its documents only",
                c.path, c.dependent_type, c.dependent_type
            )));
        }
    }
    let flat_unset = copies
        .iter()
        .any(|c| matches!(&c.kind, CopyKind::Flat { via } if via_written(update, via).is_some()));
    if ids.is_empty() && !flat_unset {
        return Ok(Taken::default());
    }
    let mut wanted = Wanted::default();
    for (i, id) in &ids {
        wanted.add(&copies[*i], id);
    }
    let (sources, taken) =
        crate::trace::step!("fill", collection, wanted.fetch(odm, session)).await?;
    write_values(collection, &copies, update, &sources)?;
    Ok(taken)
}

/// Writes into `update` the values of the sources its summaries and references name, from
/// `sources` (fetched): a source that does not exist is a dangling reference, a value the copy
/// cannot hold an error naming the source.
fn write_values(
    collection: &str,
    copies: &[CopyInfo],
    update: &mut Document,
    sources: &super::fill::Sources,
) -> Result<()> {
    let dangling = |copy: &CopyInfo, id: &Bson| Error::DanglingReference {
        collection: collection.to_owned(),
        id: "(the documents this update matches)".to_owned(),
        path: copy.path.clone(),
        target: copy.source.to_owned(),
        missing: id.to_string(),
    };
    for copy in copies {
        let found = sources.get(copy.source);
        let lookup = |id: &Bson| {
            found
                .and_then(|s| s.get(&crate::document::IdKey::of(id)))
                .filter(|source| copy.is_source(source))
        };
        match &copy.kind {
            CopyKind::Summary { id, .. } => {
                let mut missing = None;
                let mut malformed = None;
                each_summary(update, copy, &mut |s| {
                    let Some(sid) = s.get(id).cloned() else {
                        return;
                    };
                    match lookup(&sid).map(|source| copy.values_of(source)) {
                        Some(Ok(values)) => {
                            for (to, v) in values {
                                s.insert(to, v);
                            }
                        }
                        Some(Err(e)) => malformed = malformed.take().or(Some(e)),
                        None => missing = missing.take().or(Some(sid)),
                    }
                });
                if let Some(e) = malformed {
                    return Err(e);
                }
                if let Some(sid) = missing {
                    return Err(dangling(copy, &sid));
                }
            }
            CopyKind::Flat { via } => {
                let Some((op, sid)) = via_written(update, via) else {
                    continue;
                };
                // A cleared reference clears its copies (`$unset`, as the `nullify` rule does:
                // a copy has the source field's type, which may not hold null).
                let (op, value) = match sid {
                    Some(sid) => {
                        let source = lookup(sid).ok_or_else(|| dangling(copy, sid))?;
                        let value = copy.values_of(source)?.into_iter().next();
                        (op, value.map_or(Bson::Null, |(_, v)| v))
                    }
                    None => ("$unset", Bson::String(String::new())),
                };
                match update.get_mut(op) {
                    Some(Bson::Document(fields)) => {
                        fields.insert(copy.path.clone(), value);
                    }
                    _ => {
                        update.insert(op, bson::doc! { copy.path.clone(): value });
                    }
                }
            }
            CopyKind::Latest { .. } => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn parts() -> CopyInfo {
        CopyInfo::new(
            "Product",
            "products",
            "parts",
            "parts",
            CopyKind::Summary {
                array: true,
                id: "id".to_owned(),
                optional: false,
            },
            vec![("name".to_owned(), "name".to_owned())],
        )
    }

    fn product_name() -> CopyInfo {
        CopyInfo::new(
            "Part",
            "parts",
            "product_name",
            "products",
            CopyKind::Flat {
                via: "product".to_owned(),
            },
            vec![("name".to_owned(), String::new())],
        )
    }

    #[test]
    fn elements() {
        for rest in [".0", ".12", ".$", ".$[]", ".$[p]"] {
            assert!(is_element(rest), "{rest}");
        }
        for rest in ["", ".name", "0", ".$[p].name", ".$x"] {
            assert!(!is_element(rest), "{rest}");
        }
    }

    #[test]
    fn finds_every_whole_summary() {
        let mut update = doc! {
            "$push": { "parts": { "$each": [{ "id": 1 }, { "id": 2 }] } },
            "$set": { "parts.3": { "id": 3 }, "other": { "id": 9 } },
            "$addToSet": { "parts": { "id": 4 } },
        };
        let mut seen = Vec::new();
        each_summary(&mut update, &parts(), &mut |s| {
            seen.push(s.get_i32("id").unwrap());
        });
        seen.sort();
        assert_eq!(seen, [1, 2, 3, 4]);
    }

    #[test]
    fn refuses_writes_inside_copies() {
        let copies = [parts(), product_name()];
        for update in [
            doc! { "$set": { "parts.$[p].name": "x" } },
            doc! { "$set": { "parts.0.id": 3 } },
            doc! { "$set": { "parts.$.name": "x" } },
            doc! { "$set": { "product_name": "x" } },
            doc! { "$unset": { "product_name": "" } },
            doc! { "$inc": { "parts.0.name": 1 } },
            doc! { "$currentDate": { "product_name": true } },
            doc! { "$rename": { "name": "product_name" } },
            doc! { "$rename": { "product_name": "kept" } },
            doc! { "$rename": { "spare_parts": "parts" } },
            doc! { "$setOnInsert": { "parts.$[].name": "x" } },
            // The generated identifiers of `each_where(...)`.
            doc! { "$set": { "parts.$[e0].id": 1, "parts.$[e1].quantity": 2 } },
        ] {
            let err = refuse_copy_writes("products", &update, &copies).unwrap_err();
            assert!(matches!(err, Error::CopyWrite { .. }), "{update}");
        }
        for update in [
            doc! { "$set": { "parts": [] } },
            doc! { "$set": { "parts.$[p]": { "id": 1 } } },
            doc! { "$set": { "parts.$[p].quantity": 2 } },
            doc! { "$push": { "parts": { "id": 1 } } },
            doc! { "$set": { "product": 1, "name": "x" } },
        ] {
            refuse_copy_writes("products", &update, &copies).unwrap();
        }
    }

    #[test]
    fn sees_the_reference_a_flat_copy_follows() {
        let set = doc! { "$set": { "product": 7 } };
        assert_eq!(
            via_written(&set, "product"),
            Some(("$set", Some(&Bson::Int32(7))))
        );
        let unset = doc! { "$unset": { "product": "" } };
        assert_eq!(via_written(&unset, "product"), Some(("$unset", None)));
        assert_eq!(via_written(&set, "other"), None);
    }
}
