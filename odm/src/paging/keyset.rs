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
/// every other value: ascending, after `v` is `{$gt: v}` or a later type, after `null` is
/// `{$ne: null}`; descending, after `v` is `{$lt: v}`, an earlier type or `null`/missing, and
/// nothing is after `null` (see [`beyond`]).
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

/// MongoDB's sort order of BSON types, as the `$type` aliases of each bracket: a value sorts
/// after every value of an earlier bracket, whatever their values. `$gt` and `$lt` compare
/// values of one bracket only.
const BRACKETS: [&[&str]; 13] = [
    &["minKey"],
    &["null"],
    &["number"],
    &["string", "symbol"],
    &["object"],
    &["array"],
    &["binData"],
    &["objectId"],
    &["bool"],
    &["date"],
    &["timestamp"],
    &["regex"],
    &["maxKey"],
];

/// The bracket of `value` in [`BRACKETS`]; `None` for the types the sort order does not list.
fn bracket(value: &Bson) -> Option<usize> {
    Some(match value {
        Bson::MinKey => 0,
        Bson::Null | Bson::Undefined => 1,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => 2,
        Bson::String(_) | Bson::Symbol(_) => 3,
        Bson::Document(_) => 4,
        Bson::Array(_) => 5,
        Bson::Binary(_) => 6,
        Bson::ObjectId(_) => 7,
        Bson::Boolean(_) => 8,
        Bson::DateTime(_) => 9,
        Bson::Timestamp(_) => 10,
        Bson::RegularExpression(_) => 11,
        Bson::MaxKey => 12,
        _ => return None,
    })
}

/// `{path: {$type: [...]}}` for the brackets in `range`; `None` when it is empty.
fn of_types(path: &str, range: std::ops::Range<usize>) -> Option<Document> {
    let types: Vec<Bson> = BRACKETS[range]
        .iter()
        .flat_map(|b| b.iter().map(|t| Bson::from(*t)))
        .collect();
    (!types.is_empty()).then(|| doc! { path: { "$type": types } })
}

/// The documents strictly after `value` at `key`; `None` when none can be.
///
/// Within `value`'s bracket, `$gt` (ascending) or `$lt` (descending); then every value of the
/// brackets that sort after it. NaN sorts before every other number, and neither `$gt` nor
/// `$lt` matches it or against it: after NaN ascending come the other numbers (`$gte: -inf`),
/// and NaN comes after every number descending.
fn beyond(key: &Key, value: &Bson) -> Option<Document> {
    let path = key.path.as_str();
    let nan = matches!(value, Bson::Double(d) if d.is_nan());
    let Some(at) = bracket(value) else {
        // A type the sort order does not place: its own values only.
        let op = if key.ascending { "$gt" } else { "$lt" };
        return Some(doc! { path: { op: value.clone() } });
    };
    let mut any: Vec<Document> = Vec::new();
    if key.ascending {
        match value {
            Bson::Null | Bson::Undefined => return Some(doc! { path: { "$ne": Bson::Null } }),
            _ if nan => any.push(doc! { path: { "$gte": f64::NEG_INFINITY } }),
            v => any.push(doc! { path: { "$gt": v.clone() } }),
        }
        any.extend(of_types(path, at + 1..BRACKETS.len()));
    } else {
        match value {
            Bson::Null | Bson::Undefined => return None,
            _ if nan => {}
            v => {
                any.push(doc! { path: { "$lt": v.clone() } });
                if at == 2 {
                    any.push(doc! { path: { "$eq": f64::NAN } });
                }
            }
        }
        // Null and a missing field last, after every other bracket but `minKey`.
        any.extend(of_types(path, 2..at));
        any.push(doc! { path: { "$eq": Bson::Null } });
        any.extend(of_types(path, 0..1));
    }
    Some(match any.len() {
        1 => any.remove(0),
        _ => doc! { "$or": any },
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

    /// Equal as printed: NaN is not equal to itself.
    fn same<A: std::fmt::Debug, B: std::fmt::Debug>(a: A, b: B) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    /// `{path: {$type: <the aliases of brackets from..to>}}`.
    fn types(path: &str, range: std::ops::Range<usize>) -> Document {
        of_types(path, range).expect("some brackets")
    }

    #[test]
    fn after_a_compound_key() {
        let keys = [key("title", true), key("year", false), key("_id", true)];
        let filter = after(&keys, &[Bson::from("B"), Bson::from(1999), Bson::from(7)]);
        same(
            filter,
            doc! { "$or": [
                { "$or": [{ "title": { "$gt": "B" } }, types("title", 4..13)] },
                { "$and": [
                    { "title": "B" },
                    { "$or": [
                        { "year": { "$lt": 1999 } },
                        { "year": { "$eq": f64::NAN } },
                        { "year": { "$eq": null } },
                        { "year": { "$type": ["minKey"] } },
                    ] },
                ] },
                { "$and": [
                    { "title": "B" },
                    { "year": 1999 },
                    { "$or": [{ "_id": { "$gt": 7 } }, types("_id", 3..13)] },
                ] },
            ] },
        );
    }

    #[test]
    fn after_a_value_come_the_brackets_mongodb_sorts_after_it() {
        let asc = key("v", true);
        let desc = key("v", false);
        assert_eq!(
            types("v", 2..4),
            doc! { "v": { "$type": ["number", "string", "symbol"] } }
        );
        // Ascending after a string: greater strings, then objects and every later bracket.
        assert_eq!(
            beyond(&asc, &Bson::from("a")),
            Some(doc! { "$or": [{ "v": { "$gt": "a" } }, types("v", 4..13)] })
        );
        // Descending after a boolean: smaller booleans, then every earlier bracket down to
        // numbers, then null or missing, then `minKey`.
        assert_eq!(
            beyond(&desc, &Bson::Boolean(true)),
            Some(doc! { "$or": [
                { "v": { "$lt": true } },
                types("v", 2..8),
                { "v": { "$eq": null } },
                types("v", 0..1),
            ] })
        );
        // After `maxKey` ascending comes nothing of another bracket.
        assert_eq!(
            beyond(&asc, &Bson::MaxKey),
            Some(doc! { "v": { "$gt": Bson::MaxKey } })
        );
    }

    #[test]
    fn nan_sorts_before_every_other_number() {
        let asc = key("v", true);
        let desc = key("v", false);
        let nan = Bson::Double(f64::NAN);
        same(
            beyond(&asc, &nan),
            Some(doc! { "$or": [{ "v": { "$gte": f64::NEG_INFINITY } }, types("v", 3..13)] }),
        );
        same(
            beyond(&desc, &nan),
            Some(doc! { "$or": [{ "v": { "$eq": null } }, types("v", 0..1)] }),
        );
        // Descending, NaN follows every other number.
        same(
            beyond(&desc, &Bson::from(2.5)),
            Some(doc! { "$or": [
                { "v": { "$lt": 2.5 } },
                { "v": { "$eq": f64::NAN } },
                { "v": { "$eq": null } },
                types("v", 0..1),
            ] }),
        );
    }

    #[test]
    fn after_null_follows_mongodb_s_order() {
        let keys = [key("subtitle", true), key("_id", true)];
        assert_eq!(
            after(&keys, &[Bson::Null, Bson::from(3)]),
            doc! { "$or": [
                { "subtitle": { "$ne": null } },
                { "$and": [
                    { "subtitle": null },
                    { "$or": [{ "_id": { "$gt": 3 } }, types("_id", 3..13)] },
                ] },
            ] }
        );
        let keys = [key("subtitle", false), key("_id", true)];
        assert_eq!(
            after(&keys, &[Bson::Null, Bson::from(3)]),
            doc! { "$and": [
                { "subtitle": null },
                { "$or": [{ "_id": { "$gt": 3 } }, types("_id", 3..13)] },
            ] }
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
                { "$or": [{ "title": { "$gt": hostile.clone() } }, types("title", 5..13)] },
                { "$and": [
                    { "title": { "$eq": hostile } },
                    { "$or": [{ "_id": { "$gt": regex } }, types("_id", 12..13)] },
                ] },
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
