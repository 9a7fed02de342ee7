//! The array filters of an update through filtered element paths (`referrers.$[e0].count`).
//!
//! A filtered element path names its elements by an identifier that the update's
//! `arrayFilters` defines (`{"e0.domain": "google.com"}`). The identifiers are generated
//! here, never taken from a caller: `e0`, `e1`, ... in the order a path is built. Two paths
//! combined into one update may have picked the same identifier for different conditions; the
//! second is then renamed, and a condition both use is sent once (MongoDB refuses an
//! identifier defined twice, and one defined but used by no path).

use bson::{Bson, Document};

/// The conditions of the filtered element segments of a path or of an update, by identifier.
/// Each condition is stored as built on the element (`{domain: ...}`) and prefixed with
/// its identifier when sent. Empty (as for nearly every path and update) it is a null
/// pointer: nothing to allocate, move or drop.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ArrayFilters(Option<Box<Conditions>>);

/// The conditions themselves; never empty when held.
#[derive(Debug, Clone, Default, PartialEq)]
struct Conditions {
    conditions: Vec<(String, Document)>,
    /// A value of a condition that failed to encode: `(what, message)`, reported when the
    /// update runs.
    error: Option<(String, String)>,
}

impl Conditions {
    fn fresh(&self) -> String {
        (0..)
            .map(|n| format!("e{n}"))
            .find(|c| !self.conditions.iter().any(|(id, _)| id == c))
            .unwrap_or_default()
    }
}

impl ArrayFilters {
    pub(crate) const fn new() -> Self {
        ArrayFilters(None)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Adds a condition on the elements of one array; returns its fresh identifier.
    pub(crate) fn add(&mut self, condition: Document, error: Option<(String, String)>) -> String {
        let inner = self.0.get_or_insert_with(Default::default);
        if inner.error.is_none() {
            inner.error = error;
        }
        let id = inner.fresh();
        inner.conditions.push((id.clone(), condition));
        id
    }

    /// Takes in the conditions of `other`, and returns the renames `(old, new)` to apply to
    /// the identifiers of `other`'s paths: a condition already here is shared, an identifier
    /// already used for another condition gets a fresh one.
    pub(crate) fn merge(&mut self, other: ArrayFilters) -> Vec<(String, String)> {
        let Some(other) = other.0 else {
            return Vec::new();
        };
        let inner = self.0.get_or_insert_with(Default::default);
        if inner.error.is_none() {
            inner.error = other.error;
        }
        let mut renames = Vec::new();
        for (id, condition) in other.conditions {
            if let Some((same, _)) = inner.conditions.iter().find(|(_, c)| *c == condition) {
                if *same != id {
                    renames.push((id, same.clone()));
                }
                continue;
            }
            // The renames apply to `other`'s original names all at once, so that a fresh name
            // given here may be one `other` uses for a later condition (renamed in turn).
            let id = if inner.conditions.iter().any(|(i, _)| *i == id) {
                let fresh = inner.fresh();
                renames.push((id, fresh.clone()));
                fresh
            } else {
                id
            };
            inner.conditions.push((id, condition));
        }
        renames
    }

    /// The `arrayFilters` as sent: each condition's keys prefixed with its identifier.
    pub(crate) fn documents(&self) -> Vec<Document> {
        match &self.0 {
            None => Vec::new(),
            Some(inner) => inner
                .conditions
                .iter()
                .map(|(id, c)| prefixed(id, c))
                .collect(),
        }
    }

    pub(crate) fn error(&self) -> Option<&(String, String)> {
        self.0.as_ref()?.error.as_ref()
    }
}

/// `{domain: d}` -> `{"e0.domain": d}`, through `$and`/`$or`/`$nor`; a condition
/// on the element itself (`""`, for an array of scalars) becomes `{e0: ...}`.
fn prefixed(id: &str, condition: &Document) -> Document {
    condition
        .iter()
        .map(|(key, value)| match (key.as_str(), value) {
            ("$and" | "$or" | "$nor", Bson::Array(items)) => (
                key.clone(),
                Bson::Array(
                    items
                        .iter()
                        .map(|item| match item {
                            Bson::Document(d) => Bson::Document(prefixed(id, d)),
                            other => other.clone(),
                        })
                        .collect(),
                ),
            ),
            ("", _) => (id.to_owned(), value.clone()),
            (k, _) if k.starts_with('$') => (key.clone(), value.clone()),
            (k, _) => (format!("{id}.{k}"), value.clone()),
        })
        .collect()
}

/// Renames the identifiers of the element segments of `path` (`a.$[e0].b` -> `a.$[e1].b`).
pub(crate) fn rename_path(path: &str, renames: &[(String, String)]) -> String {
    path.split('.')
        .map(|segment| {
            segment
                .strip_prefix("$[")
                .and_then(|s| s.strip_suffix(']'))
                .and_then(|id| renames.iter().find(|(old, _)| old == id))
                .map_or_else(|| segment.to_owned(), |(_, new)| format!("$[{new}]"))
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn identifiers_are_generated_in_order() {
        let mut f = ArrayFilters::default();
        assert_eq!(f.add(doc! { "domain": { "$eq": "a" } }, None), "e0");
        assert_eq!(f.add(doc! { "": { "$gt": 1 } }, None), "e1");
        assert_eq!(
            f.documents(),
            vec![
                doc! { "e0.domain": { "$eq": "a" } },
                doc! { "e1": { "$gt": 1 } }
            ]
        );
    }

    #[test]
    fn logical_operators_are_prefixed_inside() {
        let c = doc! { "$or": [{ "a": 1 }, { "$and": [{ "b": 2 }] }], "c": 3 };
        assert_eq!(
            prefixed("e0", &c),
            doc! { "$or": [{ "e0.a": 1 }, { "$and": [{ "e0.b": 2 }] }], "e0.c": 3 }
        );
    }

    #[test]
    fn merge_shares_equal_conditions_and_renames_clashes() {
        let mut a = ArrayFilters::default();
        a.add(doc! { "x": 1 }, None);
        let mut b = ArrayFilters::default();
        b.add(doc! { "y": 2 }, None);
        b.add(doc! { "x": 1 }, None);
        let renames = a.merge(b);
        assert_eq!(
            renames,
            vec![
                ("e0".to_owned(), "e1".to_owned()),
                ("e1".to_owned(), "e0".to_owned())
            ]
        );
        assert_eq!(a.documents(), vec![doc! { "e0.x": 1 }, doc! { "e1.y": 2 }]);
        // Applied at once, so that `e0 -> e1` and `e1 -> e0` swap.
        assert_eq!(rename_path("a.$[e0].b.$[e1]", &renames), "a.$[e1].b.$[e0]");
        assert_eq!(rename_path("a.$.b.$[]", &renames), "a.$.b.$[]");
    }
}
