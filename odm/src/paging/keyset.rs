//! The keyset: the sort's fields with `_id` as the tie-breaker, the values of a document at
//! them, and the filter for "after that document" in the sort's order, as MongoDB orders it.

use bson::raw::RawBsonRef;
use bson::{doc, Bson, Document, RawDocument};

use crate::error::show_id;
use crate::{literal, Error, Result};

/// One key of the sort: a stored path and whether it ascends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Key {
    pub(crate) path: String,
    pub(crate) ascending: bool,
}

/// The keys of `sort` (a typed [`Sort`](crate::Sort)'s document: `{path: 1 | -1}`), then
/// `_id` ascending unless the sort already names it: the order is then total, so that a page
/// ends at one document and the next starts right after it.
pub(crate) fn keys(sort: Option<&Document>) -> Vec<Key> {
    let mut keys: Vec<Key> = sort
        .into_iter()
        .flatten()
        .map(|(path, dir)| Key {
            path: path.clone(),
            ascending: !matches!(dir, Bson::Int32(d) if *d < 0)
                && !matches!(dir, Bson::Int64(d) if *d < 0)
                && !matches!(dir, Bson::Double(d) if *d < 0.0),
        })
        .collect();
    if !keys.iter().any(|k| k.path == "_id") {
        keys.push(Key {
            path: "_id".to_owned(),
            ascending: true,
        });
    }
    keys
}

/// The sort document sent: the keys in order, `1` or `-1`.
pub(crate) fn sort_document(keys: &[Key]) -> Document {
    keys.iter()
        .map(|k| {
            (
                k.path.clone(),
                Bson::Int32(if k.ascending { 1 } else { -1 }),
            )
        })
        .collect()
}

/// The values of `raw` at the keys. A missing field (or one under a missing or non-document
/// parent) is `null`, which MongoDB's sort takes it for. An array is refused: MongoDB sorts a
/// document by its array's smallest (or largest) element, which no "after" filter can follow.
pub(crate) fn values_of(collection: &str, raw: &RawDocument, keys: &[Key]) -> Result<Vec<Bson>> {
    keys.iter()
        .map(|k| {
            value_at(raw, &k.path).map_err(|message| decode_error(collection, raw, k, message))
        })
        .collect()
}

fn value_at(raw: &RawDocument, path: &str) -> std::result::Result<Bson, String> {
    let mut doc = raw;
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        let value = doc.get(segment).map_err(|e| e.to_string())?;
        match (value, segments.peek().is_some()) {
            (Some(RawBsonRef::Array(_)), _) => {
                return Err(
                    "a sort key of keyset pagination holds an array; MongoDB sorts it \
                            by one of its elements, which a page cannot start after"
                        .to_owned(),
                )
            }
            (Some(RawBsonRef::Document(d)), true) => doc = d,
            (Some(v), false) => return Bson::try_from(v).map_err(|e| e.to_string()),
            _ => return Ok(Bson::Null),
        }
    }
    Ok(Bson::Null)
}

fn decode_error(collection: &str, raw: &RawDocument, key: &Key, message: String) -> Error {
    let id = raw
        .get("_id")
        .ok()
        .flatten()
        .and_then(|v| Bson::try_from(v).ok());
    Error::Decode {
        collection: collection.to_owned(),
        id: show_id(id.as_ref()),
        path: key.path.clone(),
        message,
    }
}

/// The documents after the one whose key values are `values`, in the keys' order:
/// `{$or: [{k1: after v1}, {k1: v1, k2: after v2}, ...]}`, each value matched literally.
///
/// "After" follows MongoDB's sort, in which a missing field and `null` are equal and before
/// every other value: ascending, after `v` is `{$gt: v}`, after `null` is `{$ne: null}`;
/// descending, after `v` is `{$lt: v}` or `null`/missing, and nothing is after `null`.
pub(crate) fn after(keys: &[Key], values: &[Bson]) -> Document {
    let mut branches = Vec::with_capacity(keys.len());
    for (i, (key, value)) in keys.iter().zip(values).enumerate() {
        let Some(beyond) = beyond(key, value) else {
            continue;
        };
        let mut all: Vec<Document> = keys
            .iter()
            .zip(values)
            .take(i)
            .map(|(k, v)| literal::eq(&k.path, v.clone()))
            .collect();
        all.push(beyond);
        branches.push(match all.len() {
            1 => all.remove(0),
            _ => doc! { "$and": all },
        });
    }
    match branches.len() {
        // Nothing can be after: `{_id: {$in: []}}` matches no document.
        0 => doc! { "_id": { "$in": [] } },
        1 => branches.remove(0),
        _ => doc! { "$or": branches },
    }
}

/// The documents strictly after `value` at `key`; `None` when none can be.
fn beyond(key: &Key, value: &Bson) -> Option<Document> {
    let path = key.path.as_str();
    Some(match (key.ascending, value) {
        (true, Bson::Null) => doc! { path: { "$ne": Bson::Null } },
        (true, v) => doc! { path: { "$gt": v.clone() } },
        (false, Bson::Null) => return None,
        (false, v) => doc! { "$or": [
            { path: { "$lt": v.clone() } },
            { path: { "$eq": Bson::Null } },
        ] },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(path: &str, ascending: bool) -> Key {
        Key {
            path: path.to_owned(),
            ascending,
        }
    }

    #[test]
    fn id_breaks_ties_unless_the_sort_names_it() {
        let sort = doc! { "title": 1, "year": -1 };
        assert_eq!(
            keys(Some(&sort)),
            [key("title", true), key("year", false), key("_id", true)]
        );
        let sort = doc! { "_id": -1 };
        assert_eq!(keys(Some(&sort)), [key("_id", false)]);
        assert_eq!(keys(None), [key("_id", true)]);
    }

    #[test]
    fn after_a_compound_key() {
        let keys = [key("title", true), key("year", false), key("_id", true)];
        let filter = after(&keys, &[Bson::from("B"), Bson::from(1999), Bson::from(7)]);
        assert_eq!(
            filter,
            doc! { "$or": [
                { "title": { "$gt": "B" } },
                { "$and": [
                    { "title": "B" },
                    { "$or": [{ "year": { "$lt": 1999 } }, { "year": { "$eq": null } }] },
                ] },
                { "$and": [
                    { "title": "B" },
                    { "year": 1999 },
                    { "_id": { "$gt": 7 } },
                ] },
            ] }
        );
    }

    #[test]
    fn after_null_follows_mongodb_s_order() {
        let keys = [key("subtitle", true), key("_id", true)];
        assert_eq!(
            after(&keys, &[Bson::Null, Bson::from(3)]),
            doc! { "$or": [
                { "subtitle": { "$ne": null } },
                { "$and": [{ "subtitle": null }, { "_id": { "$gt": 3 } }] },
            ] }
        );
        let keys = [key("subtitle", false), key("_id", true)];
        assert_eq!(
            after(&keys, &[Bson::Null, Bson::from(3)]),
            doc! { "$and": [{ "subtitle": null }, { "_id": { "$gt": 3 } }] }
        );
    }

    #[test]
    fn hostile_values_stay_operands() {
        // A value that would be operators or a pattern in place of a condition is only ever
        // the operand of `$eq`, `$gt` or `$lt`, which MongoDB takes as a value.
        let keys = [key("title", true), key("_id", true)];
        let hostile = Bson::Document(doc! { "$where": "sleep(1000)" });
        let regex = Bson::RegularExpression(bson::Regex {
            pattern: ".*".try_into().expect("a C string"),
            options: "".try_into().expect("a C string"),
        });
        let filter = after(&keys, &[hostile.clone(), regex.clone()]);
        assert_eq!(
            filter,
            doc! { "$or": [
                { "title": { "$gt": hostile.clone() } },
                { "$and": [{ "title": { "$eq": hostile } }, { "_id": { "$gt": regex } }] },
            ] }
        );
    }

    #[test]
    fn values_at_paths() {
        let raw = bson::rawdoc! { "_id": 1, "author": { "name": "Woolf" }, "tags": ["a"] };
        let keys = [
            key("author.name", true),
            key("subtitle", true),
            key("author.x.y", true),
        ];
        assert_eq!(
            values_of("books", &raw, &keys).ok(),
            Some(vec![Bson::from("Woolf"), Bson::Null, Bson::Null])
        );
        let err = values_of("books", &raw, &[key("tags", true)]).unwrap_err();
        assert!(
            matches!(&err, Error::Decode { collection, id, path, .. }
                if collection == "books" && id == "{ _id: 1 }" && path == "tags"),
            "{err}"
        );
    }
}
