//! Filters built from values, matched literally: a value never becomes an operator or a
//! pattern.
//!
//! MongoDB reads a value written in place of a condition as more than a value: in
//! `{_id: v}`, a document `v` whose first key starts with `$` is operators
//! (`{_id: {$exists: true}}` matches every document) and a regular expression is a pattern;
//! an element of `$in`, `$nin` or `$all`, or the condition of a `$pull`, is read the same way.
//! `$eq` takes its operand as a value, a regular expression included, and `$pullAll` compares
//! elements as values. Every filter odm builds from an id, a reference or a caller's value goes
//! through the functions here; `Filter::raw` and `Update::raw` are the only ways to send
//! operators of one's own.
//!
//! Lists keep their one `$in` when no element would be misread, which is always the case for
//! ids the server returned (an `_id` is never a regular expression) and for documents odm
//! writes (their keys are checked). An element that would be misread is matched on its own
//! with `$eq`, beside the `$in` of the others: the match stays literal instead of being
//! refused, so that `is_in` agrees with `eq` on every value.

use bson::{doc, Bson, Document};

/// Equal to `value`: `{path: value}` for a value MongoDB can only read as itself (an id, a
/// string, a number, a date, a boolean, binary data, null), `{path: {$eq: value}}` for any
/// other (a document, which could be read as operators, a regular expression, which would be a
/// pattern, an array, which could hold either).
///
/// The bare form is what the server recognises as a lookup by id: before MongoDB 8.1 the fast
/// path for `{_id: value}` (IDHACK) does not take `{_id: {$eq: value}}`, which goes through the
/// query planner instead.
pub(crate) fn eq(path: &str, value: Bson) -> Document {
    doc! { path: condition(value) }
}

/// The condition of [`eq`] on its own: `value`, or `{$eq: value}`.
pub(crate) fn condition(value: Bson) -> Bson {
    if plain(&value) {
        value
    } else {
        Bson::Document(doc! { "$eq": value })
    }
}

/// Whether `value` written in place of a condition can only be read as equality to itself.
pub(crate) fn plain(value: &Bson) -> bool {
    matches!(
        value,
        Bson::ObjectId(_)
            | Bson::String(_)
            | Bson::Int32(_)
            | Bson::Int64(_)
            | Bson::Double(_)
            | Bson::Decimal128(_)
            | Bson::Boolean(_)
            | Bson::DateTime(_)
            | Bson::Timestamp(_)
            | Bson::Binary(_)
            | Bson::Null
    )
}

/// Whether MongoDB would read `value` as something other than a value when it stands for a
/// condition or is an element of `$in`/`$nin`/`$all`: a regular expression (a pattern), or a
/// document with a key starting with `$` (operators such as `$elemMatch`, or refused).
pub(crate) fn misread(value: &Bson) -> bool {
    match value {
        Bson::RegularExpression(_) => true,
        Bson::Document(d) => d.keys().any(|k| k.starts_with('$')),
        _ => false,
    }
}

fn split(values: Vec<Bson>) -> (Vec<Bson>, Vec<Bson>) {
    values.into_iter().partition(|v| !misread(v))
}

/// Appends `conditions` to `filter`'s top-level `$and`, which it creates when missing.
pub(crate) fn and(filter: &mut Document, conditions: impl IntoIterator<Item = Bson>) {
    match filter.get_mut("$and") {
        Some(Bson::Array(all)) => all.extend(conditions),
        _ => {
            filter.insert("$and", conditions.into_iter().collect::<Vec<_>>());
        }
    }
}

/// Equal to one of `values`: `{path: {$in: values}}`, or, when some of them would be misread,
/// `{$or: [{path: {$in: others}}, {path: {$eq: v}}, ...]}`.
pub(crate) fn is_in(path: &str, values: Vec<Bson>) -> Document {
    let (plain, odd) = split(values);
    if odd.is_empty() {
        return doc! { path: { "$in": plain } };
    }
    let mut any = Vec::with_capacity(odd.len() + 1);
    if !plain.is_empty() {
        any.push(doc! { path: { "$in": plain } });
    }
    any.extend(odd.into_iter().map(|v| eq(path, v)));
    doc! { "$or": any }
}

/// Equal to none of `values`: `{path: {$nin: values}}`, or `{$nor: [is_in]}` when some of them
/// would be misread.
pub(crate) fn not_in(path: &str, values: Vec<Bson>) -> Document {
    if !values.iter().any(misread) {
        return doc! { path: { "$nin": values } };
    }
    doc! { "$nor": [is_in(path, values)] }
}

/// Not equal to `value`: `{path: {$ne: value}}`, or `{$nor: [{path: {$eq: value}}]}` for a
/// value `$ne` would misread (the server refuses a regular expression there).
pub(crate) fn ne(path: &str, value: Bson) -> Document {
    if !misread(&value) {
        return doc! { path: { "$ne": value } };
    }
    doc! { "$nor": [eq(path, value)] }
}

/// An array holding every one of `values`: `{path: {$all: values}}`, or, when some of them
/// would be misread, `{$and: [{path: {$all: others}}, {path: {$eq: v}}, ...]}` (`$eq` on an
/// array matches an element equal to `v`, as `$all` does).
pub(crate) fn all(path: &str, values: Vec<Bson>) -> Document {
    let (plain, odd) = split(values);
    if odd.is_empty() {
        return doc! { path: { "$all": plain } };
    }
    let mut each = Vec::with_capacity(odd.len() + 1);
    if !plain.is_empty() {
        each.push(doc! { path: { "$all": plain } });
    }
    each.extend(odd.into_iter().map(|v| eq(path, v)));
    doc! { "$and": each }
}

/// Removes from the array `path` every element equal to one of `values`, compared as values:
/// `{$pullAll: {path: values}}` (a `$pull` would read a regular expression or a `$` document
/// among them as a condition).
pub(crate) fn pull_all(path: &str, values: Vec<Bson>) -> Document {
    doc! { "$pullAll": { path: values } }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::Regex;

    fn regex() -> Bson {
        Bson::RegularExpression(Regex {
            pattern: ".*".try_into().unwrap(),
            options: "".try_into().unwrap(),
        })
    }

    #[test]
    fn equality_is_bare_only_for_values_read_as_themselves() {
        let id = bson::oid::ObjectId::new();
        assert_eq!(eq("_id", id.into()), doc! { "_id": id });
        assert_eq!(eq("t", "$where".into()), doc! { "t": "$where" });
        assert_eq!(eq("n", Bson::Int64(3)), doc! { "n": 3_i64 });
        assert_eq!(eq("p", Bson::Null), doc! { "p": null });
        let op = doc! { "$gt": "" };
        assert_eq!(eq("_id", op.clone().into()), doc! { "_id": { "$eq": op } });
        let plain_doc = doc! { "a": 1 };
        assert_eq!(
            eq("_id", plain_doc.clone().into()),
            doc! { "_id": { "$eq": plain_doc } }
        );
        assert_eq!(eq("t", regex()), doc! { "t": { "$eq": regex() } });
        let array = Bson::Array(vec![doc! { "$gt": 1 }.into()]);
        assert_eq!(eq("a", array.clone()), doc! { "a": { "$eq": array } });
    }

    #[test]
    fn plain_lists_keep_one_in() {
        assert_eq!(
            is_in("_id", vec![Bson::Int32(1), Bson::Document(doc! {"a": 1})]),
            doc! { "_id": { "$in": [1, {"a": 1}] } }
        );
        assert_eq!(
            not_in("_id", vec![Bson::Int32(1)]),
            doc! { "_id": { "$nin": [1] } }
        );
    }

    #[test]
    fn misread_elements_are_matched_with_eq() {
        let op = Bson::Document(doc! {"$exists": true});
        assert_eq!(
            is_in("_id", vec![Bson::Int32(1), regex(), op.clone()]),
            doc! { "$or": [
                { "_id": { "$in": [1] } },
                { "_id": { "$eq": regex() } },
                { "_id": { "$eq": op.clone() } },
            ] }
        );
        assert_eq!(
            is_in("_id", vec![regex()]),
            doc! { "$or": [{ "_id": { "$eq": regex() } }] }
        );
        assert_eq!(
            not_in("x", vec![op.clone()]),
            doc! { "$nor": [{ "$or": [{ "x": { "$eq": op.clone() } }] }] }
        );
        assert_eq!(
            all("tags", vec![Bson::from("a"), regex()]),
            doc! { "$and": [{ "tags": { "$all": ["a"] } }, { "tags": { "$eq": regex() } }] }
        );
        assert_eq!(
            ne("x", regex()),
            doc! { "$nor": [{ "x": { "$eq": regex() } }] }
        );
    }
}
