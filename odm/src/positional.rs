//! Paths to array elements: the positional `$`, `$[]` and `$[e0]` of updates, and `$elemMatch`
//! filters.
//!
//! A path through an array of embedded documents (`Book::referrers().count()`, stored
//! `referrers.count`) matches each element in a query but names no element to write. These
//! methods name them: [`Field::matched`] the element the update's filter matched
//! (`referrers.$.count`), [`Field::each`] every element (`referrers.$[].count`),
//! [`Field::each_where`] the elements meeting a condition (`referrers.$[e0].count`, with the
//! condition sent in the update's `arrayFilters`). The paths below them are marked
//! [`Matched`] or [`Elements`]: they can be written, not queried. [`Field::any`] is the
//! query side: documents with one element meeting every condition (`$elemMatch`).
//!
//! Conditions are built with the element's typed paths and match values literally (`$eq`), as
//! every filter does; the identifiers of `arrayFilters` are generated (`e0`, `e1`, ...), never
//! taken from a caller.

use bson::{Bson, Document};

use crate::path::{Elements, Field, Matched, Queryable, Single};
use crate::query::{Deferred, Filter};

/// A type that can be the element of an array reached by a typed path: an embedded type (its
/// element paths are its field accessors) or a scalar (its element path is a [`Field`] of it).
#[diagnostic::on_unimplemented(
    message = "the elements of this array (`{Self}`) have no typed paths",
    label = "not an embedded type or a scalar",
    note = "element paths (`matched()`, `each()`, `each_where(...)`, `any(...)`) exist for arrays of types deriving `Embed` and of strings, numbers, booleans, `ObjectId`s and dates"
)]
pub trait ArrayElement: Sized {
    /// The paths of one element, reached from `Root`, marked `M`.
    type Paths<Root, M>;

    /// The paths of the element at `field`.
    #[doc(hidden)]
    fn element_paths<Root, M>(field: Field<Root, Self, M>) -> Self::Paths<Root, M>;
}

macro_rules! scalar_elements {
    ($($t:ty),*) => { $(
        impl ArrayElement for $t {
            type Paths<Root, M> = Field<Root, $t, M>;

            fn element_paths<Root, M>(field: Field<Root, Self, M>) -> Self::Paths<Root, M> {
                field
            }
        }
    )* };
}
scalar_elements!(
    String,
    bool,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    f32,
    f64,
    bson::oid::ObjectId,
    bson::DateTime
);

/// Path markers of arrays whose matched element (`$`) an update can name: [`Single`] only.
#[diagnostic::on_unimplemented(
    message = "the positional `$` cannot follow a path marked `{Self}`",
    label = "`matched()` needs an array reached without another array on the way",
    note = "MongoDB allows one positional `$` per path, naming the element of the outermost array the filter matched; through an array of arrays, name the outer elements with `each()` or `each_where(...)` and the inner ones with `each_where(...)`",
    note = "a copy kept by odm (`Copied`) is written by odm, never by an update"
)]
pub trait MatchedHost {}
impl MatchedHost for Single {}

/// Path markers of arrays whose elements an update can name with `$[]` or `$[e0]`: [`Single`],
/// and [`Elements`] (nested arrays: `shelves.$[e0].books.$[e1]`).
#[diagnostic::on_unimplemented(
    message = "the elements of an array reached through a path marked `{Self}` cannot be named",
    label = "`each()` and `each_where(...)` need an array reached by a path that names one value",
    note = "`Each`: the path goes through an array without naming its element; name it first (`Book::shelves().each_where(...).books().each()`)",
    note = "`Matched`: MongoDB refuses `$[]` and `$[e0]` below the positional `$`; use `each_where(...)` for both arrays",
    note = "`Copied`: a copy kept by odm is written by odm, never by an update"
)]
pub trait ElementsHost {}
impl ElementsHost for Single {}
impl ElementsHost for Elements {}

impl<Root, E: ArrayElement, M> Field<Root, Vec<E>, M> {
    /// The element an update's filter matched, the positional `$`:
    /// `Book::referrers().matched().count().inc(1)` is `{$inc: {"referrers.$.count": 1}}`, to be
    /// sent with a filter on the array (`Book::referrers().domain().eq("google.com")`, or
    /// [`Field::any`]): MongoDB writes the first element that filter matched, and refuses the
    /// update when the filter does not go through the array. One `update` command, as any
    /// update.
    pub fn matched(&self) -> E::Paths<Root, Matched>
    where
        M: MatchedHost,
    {
        E::element_paths(self.below(format!("{}.$", self.path())))
    }

    /// Every element of the array, `$[]`: `Book::referrers().each().count().set(0)` is
    /// `{$set: {"referrers.$[].count": 0}}`.
    pub fn each(&self) -> E::Paths<Root, Elements>
    where
        M: ElementsHost,
    {
        E::element_paths(self.below(format!("{}.$[]", self.path())))
    }

    /// The elements meeting `condition`, `$[e0]` with an array filter:
    /// `Book::referrers().each_where(|r| r.domain().eq("google.com")).count().inc(1)` is
    /// `{$inc: {"referrers.$[e0].count": 1}}` with `arrayFilters: [{"e0.domain":
    /// "google.com"}]`. The condition is built with the element's paths (for an array of
    /// scalars, the element itself: `|t| t.eq("draft")`, sent `{e0: "draft"}`). Every
    /// element meeting it is written, in every document the update's filter matches; a
    /// document with none is matched and left unchanged.
    pub fn each_where(
        &self,
        condition: impl FnOnce(E::Paths<E, Single>) -> Filter<E>,
    ) -> E::Paths<Root, Elements>
    where
        M: ElementsHost,
    {
        let (doc, error) = condition(E::element_paths(Field::top(""))).into_parts();
        let doc = merged(doc);
        let error = error.map(Deferred::into_parts);
        let mut field: Field<Root, E, Elements> = self.below(String::new());
        let id = field.array_filters_mut().add(doc, error);
        let field = field.below(format!("{}.$[{id}]", self.path()));
        E::element_paths(field)
    }

    /// Documents with at least one element meeting `condition`, all of it on that one element
    /// (`$elemMatch`): `Book::referrers().any(|r| r.domain().eq("google.com") & r.count().gt(3))`
    /// is `{referrers: {$elemMatch: {$and: [{domain: "google.com"}, {count: {$gt: 3}}]}}}`,
    /// where `Book::referrers().domain().eq(..) & Book::referrers().count().gt(3)` would let two
    /// different elements meet each half. Values are matched literally (`$eq`). Also the filter
    /// that [`Field::matched`] writes the first match of.
    pub fn any(&self, condition: impl FnOnce(E::Paths<E, Single>) -> Filter<E>) -> Filter<Root>
    where
        M: Queryable,
    {
        let (doc, error) = condition(E::element_paths(Field::top(""))).into_parts();
        let mut elem = Document::new();
        elem.insert(self.path(), bson::doc! { "$elemMatch": on_element(doc) });
        Filter::from_parts(elem, error)
    }
}

/// The condition of `$elemMatch`: on an embedded document, its conjunctions written as one
/// document where their paths and operators do not repeat (`{$and: [{domain: ..}, {count: ..}]}`
/// -> `{domain: .., count: ..}`, which every server reads, where some refuse `$and` there); on
/// a scalar element (built on the path `""`), its operators (`{"": {$gt: 1}}` -> `{$gt: 1}`).
fn on_element(doc: Document) -> Document {
    let doc = merged(doc);
    let scalar = |d: &Document| d.len() == 1 && d.contains_key("");
    if scalar(&doc) {
        return match doc.into_iter().next() {
            Some((_, Bson::Document(ops))) => ops,
            Some((_, other)) => bson::doc! { "$eq": other },
            None => Document::new(),
        };
    }
    if let Ok(items) = doc.get_array("$and") {
        let conditions: Option<Vec<Document>> = items
            .iter()
            .map(|i| i.as_document().filter(|d| scalar(d)).cloned())
            .map(|d| d.map(on_element))
            .collect();
        if let (Some(conditions), 1) = (conditions, doc.len()) {
            let mut merged = Document::new();
            for (op, v) in conditions.into_iter().flatten() {
                if merged.contains_key(&op) {
                    return doc;
                }
                merged.insert(op, v);
            }
            return merged;
        }
    }
    doc
}

/// The filter of an update: written as one document (see [`merged`]) when the update writes
/// through the positional operator (`referrers.$.count`), which some servers refuse to apply
/// after a top-level `$and` ("did not find the match needed from the query"); as it is
/// otherwise.
pub(crate) fn filter_for_update(filter: Document, update: &Document) -> Document {
    // Only a filter with a top-level `$and` is ever written otherwise.
    if !filter.keys().any(|k| k == "$and") {
        return filter;
    }
    let positional = update.values().any(|v| {
        v.as_document().is_some_and(|fields| {
            fields
                .keys()
                .any(|p| p.split('.').any(|segment| segment == "$"))
        })
    });
    if positional {
        merged(filter)
    } else {
        filter
    }
}

/// `doc` with its `$and` (at any depth of `$and`s) written as one document when no path, and
/// no operator of a path, is there twice; `doc` as it was otherwise.
fn merged(doc: Document) -> Document {
    fn conjuncts(doc: &Document, out: &mut Vec<(String, Bson)>) -> bool {
        for (k, v) in doc {
            match (k.as_str(), v) {
                ("$and", Bson::Array(items)) => {
                    for item in items {
                        match item {
                            Bson::Document(d) if conjuncts(d, out) => {}
                            _ => return false,
                        }
                    }
                }
                _ => out.push((k.clone(), v.clone())),
            }
        }
        true
    }
    let mut parts = Vec::new();
    if !doc.contains_key("$and") || !conjuncts(&doc, &mut parts) {
        return doc;
    }
    let mut out = Document::new();
    for (k, v) in parts {
        match (out.get_mut(&k), v) {
            (None, v) => {
                out.insert(k, v);
            }
            // Two conditions on one path: one document of their operators, when they differ.
            (Some(Bson::Document(have)), Bson::Document(more))
                if have.keys().chain(more.keys()).all(|op| op.starts_with('$'))
                    && more.keys().all(|op| !have.contains_key(op)) =>
            {
                have.extend(more);
            }
            _ => return doc,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn scalar_conditions_become_operators() {
        assert_eq!(on_element(doc! { "": { "$gt": 1 } }), doc! { "$gt": 1 });
        assert_eq!(
            on_element(doc! { "$and": [{ "": { "$gte": 80 } }, { "": { "$lt": 85 } }] }),
            doc! { "$gte": 80, "$lt": 85 }
        );
        let twice = doc! { "$and": [{ "": { "$ne": 1 } }, { "": { "$ne": 2 } }] };
        assert_eq!(on_element(twice.clone()), twice);
        let embedded = doc! { "domain": { "$eq": "a" } };
        assert_eq!(on_element(embedded.clone()), embedded);
    }

    #[test]
    fn conjunctions_become_one_document() {
        let and = doc! { "$and": [
            { "$and": [{ "domain": { "$eq": "a" } }, { "count": { "$gt": 3 } }] },
            { "count": { "$lt": 9 } },
        ] };
        assert_eq!(
            on_element(and),
            doc! { "domain": { "$eq": "a" }, "count": { "$gt": 3, "$lt": 9 } }
        );
        let repeated = doc! { "$and": [{ "count": { "$ne": 1 } }, { "count": { "$ne": 2 } }] };
        assert_eq!(on_element(repeated.clone()), repeated);
        let or = doc! { "$or": [{ "a": 1 }, { "b": 2 }] };
        assert_eq!(on_element(or.clone()), or);
    }
}
