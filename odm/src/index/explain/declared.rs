//! The declared index that would serve a shape, and, for a shape the server scans, what the
//! database holds of it: missing, differing from its declaration, or there and not chosen.

use bson::{Bson, Document};

use super::{IndexState, QueryShape};
use crate::catalog::{Catalog, IndexKey, IndexSpec};

/// The declared index of the shape's collection that can serve it: `_id_` for a filter on
/// `_id`; else the first whose first key is a field the filter names (at its top level or in
/// an `$and`), or the sort's first field, and whose partial filter, if any, holds every
/// document the filter matches (a kind's index holds that kind's documents only).
pub(super) fn declared_for(catalog: &Catalog, shape: &QueryShape) -> Option<IndexSpec> {
    let mut fields = Vec::new();
    named_fields(&shape.filter, &mut fields);
    if let Some((first, _)) = shape.sort.as_ref().and_then(|s| s.iter().next()) {
        fields.push(first.clone());
    }
    if fields.iter().any(|f| f == "_id") {
        return Some(IndexSpec::on("_id", IndexKey::Asc).named("_id_"));
    }
    catalog
        .models()
        .iter()
        .filter(|m| m.collection == shape.collection)
        .flat_map(|m| (m.indexes)())
        .find(|spec| {
            let first = spec
                .keys()
                .first()
                .is_some_and(|(path, key)| *key != IndexKey::Text && fields.contains(path));
            first
                && spec
                    .partial
                    .as_ref()
                    .is_none_or(|partial| implies(&shape.filter, partial))
        })
}

fn named_fields(filter: &Document, out: &mut Vec<String>) {
    for (key, value) in filter {
        if key == "$and" {
            for d in value.as_array().into_iter().flatten() {
                if let Some(d) = d.as_document() {
                    named_fields(d, out);
                }
            }
        } else if !key.starts_with('$') {
            out.push(key.clone());
        }
    }
}

/// Whether every document `filter` matches also matches `partial` (a partial index's filter):
/// each condition of `partial` follows from an equality or an `$in` of `filter` on the same
/// field. Anything else is not taken as implied: the index is then not said to serve it.
fn implies(filter: &Document, partial: &Document) -> bool {
    partial.iter().all(|(field, condition)| {
        if field == "$and" {
            return condition.as_array().is_some_and(|all| {
                all.iter()
                    .all(|c| c.as_document().is_some_and(|c| implies(filter, c)))
            });
        }
        match values_of(filter, field) {
            Some(values) => !values.is_empty() && values.iter().all(|v| satisfies(v, condition)),
            None => false,
        }
    })
}

/// The values `filter` allows `field` (an equality, `$eq` or `$in`, at its top level or in an
/// `$and`); `None` when it does not restrict it to a list of values.
fn values_of(filter: &Document, field: &str) -> Option<Vec<Bson>> {
    if let Some(condition) = filter.get(field) {
        let values = match condition {
            Bson::Document(d) if d.keys().any(|k| k.starts_with('$')) => {
                match (d.len(), d.get("$eq"), d.get_array("$in")) {
                    (1, Some(v), _) => Some(vec![v.clone()]),
                    (1, None, Ok(values)) => Some(values.clone()),
                    _ => None,
                }
            }
            value => Some(vec![value.clone()]),
        };
        if values.is_some() {
            return values;
        }
    }
    filter
        .get_array("$and")
        .ok()?
        .iter()
        .filter_map(Bson::as_document)
        .find_map(|d| values_of(d, field))
}

/// Whether `value` meets `condition` (a value, or `$eq`, `$in`, `$exists: true`, `$type`).
fn satisfies(value: &Bson, condition: &Bson) -> bool {
    let Bson::Document(ops) = condition else {
        return value == condition;
    };
    if !ops.keys().any(|k| k.starts_with('$')) {
        return value == condition;
    }
    ops.iter().all(|(op, arg)| match op.as_str() {
        "$eq" => value == arg,
        "$in" => arg.as_array().is_some_and(|a| a.contains(value)),
        "$exists" => arg.as_bool() == Some(true) && *value != Bson::Null,
        "$type" => match arg {
            Bson::Array(types) => types.iter().any(|t| is_type(value, t)),
            t => is_type(value, t),
        },
        _ => false,
    })
}

fn is_type(value: &Bson, name: &Bson) -> bool {
    let stored = match value {
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::Binary(_) => "binData",
        Bson::ObjectId(_) => "objectId",
        Bson::Boolean(_) => "bool",
        Bson::DateTime(_) => "date",
        Bson::Null => "null",
        Bson::RegularExpression(_) => "regex",
        Bson::Int32(_) => "int",
        Bson::Timestamp(_) => "timestamp",
        Bson::Int64(_) => "long",
        Bson::Decimal128(_) => "decimal",
        _ => return false,
    };
    let numeric = matches!(stored, "double" | "int" | "long" | "decimal");
    name.as_str()
        .is_some_and(|n| n == stored || (n == "number" && numeric))
}

/// What `existing` (the collection's `listIndexes`) holds of the declared index `spec`.
pub(super) fn state(existing: &[Document], spec: &IndexSpec) -> IndexState {
    let name = spec.name();
    if name == "_id_" {
        return IndexState::Unchosen { hidden: false };
    }
    let Some(found) = super::super::existing_index(existing, spec, &name) else {
        return IndexState::Missing;
    };
    let differences = spec.differences(found);
    if !differences.is_empty() {
        return IndexState::Differs(differences);
    }
    IndexState::Unchosen {
        hidden: found.get_bool("hidden").unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn a_kinds_partial_filter_is_implied_by_that_kind_only() {
        let print = doc! { "type": "print", "book": { "$in": [1, 2] } };
        assert!(implies(&print, &doc! { "type": "print" }));
        assert!(!implies(&print, &doc! { "type": "ebook" }));
        assert!(!implies(
            &doc! { "book": { "$in": [1] } },
            &doc! { "type": "print" }
        ));
        let nested = doc! { "$and": [{ "type": "print" }, { "type": { "$in": ["print"] } }] };
        assert!(implies(&nested, &doc! { "type": "print" }));
        // A sparse key of a kind, and the present values of a unique optional field.
        let present = doc! { "type": "print", "isbn": { "$in": ["a"] } };
        assert!(implies(
            &present,
            &doc! { "type": "print", "isbn": { "$exists": true } }
        ));
        assert!(implies(
            &present,
            &doc! { "isbn": { "$type": ["string", "int"] } }
        ));
        assert!(!implies(
            &doc! { "isbn": { "$in": [Bson::Null] } },
            &doc! { "isbn": { "$exists": true } }
        ));
        assert!(!implies(&present, &doc! { "isbn": { "$gt": "a" } }));
    }
}
