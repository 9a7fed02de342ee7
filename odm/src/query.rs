//! Typed filters, sorts and projections built from [`Field`]s.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{BitAnd, BitOr, Not};

use bson::{doc, Bson, Document};

use crate::literal;
use crate::path::{Field, Queryable, Value};
use crate::Error;

/// A value that failed to encode while a filter or update was being built. The error is kept
/// and reported when the operation runs, so that builders stay infallible.
/// Boxed, so that the filters and updates that may carry one stay small when they do not.
#[derive(Debug, Clone)]
pub(crate) struct Deferred(Box<(String, String)>);

impl Deferred {
    /// `what` failed to encode, as `message` says.
    pub(crate) fn new(what: String, message: String) -> Self {
        Deferred(Box::new((what, message)))
    }

    /// What failed, and why.
    pub(crate) fn into_parts(self) -> (String, String) {
        *self.0
    }

    pub(crate) fn into_error(self, collection: &str) -> Error {
        let (what, message) = self.into_parts();
        Error::Encode {
            collection: collection.to_owned(),
            what,
            message,
        }
    }
}

pub(crate) fn encode<T>(
    value: &impl Value<T>,
    what: impl FnOnce() -> String,
    error: &mut Option<Deferred>,
) -> Bson {
    deferred(value.to_bson(), what, error)
}

/// As [`encode`], taking the value ([`Value::into_bson`]).
pub(crate) fn encode_owned<T>(
    value: impl Value<T>,
    what: impl FnOnce() -> String,
    error: &mut Option<Deferred>,
) -> Bson {
    deferred(value.into_bson(), what, error)
}

/// The encoded value, or `Null` with the error kept for when the operation runs.
fn deferred(
    encoded: Result<Bson, bson::error::Error>,
    what: impl FnOnce() -> String,
    error: &mut Option<Deferred>,
) -> Bson {
    match encoded {
        Ok(v) => v,
        Err(e) => {
            error.get_or_insert(Deferred::new(what(), e.to_string()));
            Bson::Null
        }
    }
}

/// A query filter on the model `Root`.
///
/// Build one from a field (`Book::isbn().eq("9781857150193")`) and combine with `&`, `|`, `!`
/// or [`Filter::and`] / [`Filter::or`]. A user-supplied value is always matched literally and
/// never read as an operator or a pattern: equality to a document, an array or a regular
/// expression is sent with `$eq` (`{isbn: {$eq: ...}}`), equality to an id, a string or a
/// number as the value itself (`{isbn: "9781857150193"}`), and every other comparison with its
/// operator.
pub struct Filter<Root> {
    doc: Document,
    error: Option<Deferred>,
    scope: Scope,
    _root: PhantomData<fn() -> Root>,
}

/// Models with a text index (`#[index(text)]` on a field, or `#[odm(index(keys = "...",
/// text))]`), which `$text` needs; `#[derive(Model)]` implements it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no text index, which a text search needs",
    label = "a model without a text index",
    note = "declare one: `#[index(text)]` on each field searched; the server refuses `$text` without it"
)]
pub trait TextIndexed {}

impl<Root> Filter<Root> {
    /// Text search over the collection's text index: `{$text: {$search: terms}}`. The terms
    /// are the server's search syntax (words, `"phrases"`, `-excluded`), never an operator.
    /// [`Odm::search`](crate::Odm::search) returns each document's score too, best first.
    pub fn text(terms: &str) -> Self
    where
        Root: TextIndexed,
    {
        Filter::raw(doc! { "$text": { "$search": terms } })
    }
}

/// Which documents of a model with [soft deletes](crate::soft_delete) a filter reaches: the
/// live ones unless it says otherwise (`Filter::with_deleted`, `Filter::only_deleted`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The documents no soft delete has marked.
    #[default]
    Live,
    /// Every document, marked or not.
    All,
    /// The marked documents only.
    Deleted,
}

impl<Root> Filter<Root> {
    /// Matches every document: `{}`.
    pub fn all() -> Self {
        Filter::from_parts(Document::new(), None)
    }

    /// A filter from a raw document, sent as written. This is the one way to put operators of
    /// your own into a filter: never build it from unchecked user input. Every other filter
    /// matches values literally (`$eq` where a value could be misread, and `$in` lists whose regular expressions and
    /// `$`-keyed documents are sent as `$eq` of their own), so a value is never read as an
    /// operator or a pattern.
    pub fn raw(doc: Document) -> Self {
        Filter::from_parts(doc, None)
    }

    pub(crate) fn from_parts(doc: Document, error: Option<Deferred>) -> Self {
        Filter {
            doc,
            error,
            scope: Scope::Live,
            _root: PhantomData,
        }
    }

    /// The filter reaching the documents of `scope` (see [`Scope`]).
    pub(crate) fn scoped(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// Which documents of a soft-deleting model the filter reaches.
    pub(crate) fn scope(&self) -> Scope {
        self.scope
    }

    /// Both filters must match.
    pub fn and(self, other: Filter<Root>) -> Self {
        Filter::combine("$and", [self, other])
    }

    /// Either filter may match.
    pub fn or(self, other: Filter<Root>) -> Self {
        Filter::combine("$or", [self, other])
    }

    /// Every filter must match (`{}` when there are none).
    pub fn all_of(filters: impl IntoIterator<Item = Filter<Root>>) -> Self {
        Filter::combine("$and", filters)
    }

    /// At least one filter must match.
    pub fn any_of(filters: impl IntoIterator<Item = Filter<Root>>) -> Self {
        Filter::combine("$or", filters)
    }

    /// The filters joined by `op`. The scope of the whole is the first one a part sets (see
    /// [`Scope`]): a scope applies to the whole query, not to one condition in it.
    fn combine(op: &str, filters: impl IntoIterator<Item = Filter<Root>>) -> Self {
        let mut error = None;
        let mut scope = Scope::Live;
        let mut parts = Vec::new();
        for f in filters {
            if error.is_none() {
                error = f.error;
            }
            if scope == Scope::Live {
                scope = f.scope;
            }
            if !(op == "$and" && f.doc.is_empty()) {
                parts.push(Bson::Document(f.doc));
            }
        }
        let doc = match parts.len() {
            0 if op == "$and" => Document::new(),
            1 if op == "$and" => match parts.pop() {
                Some(Bson::Document(d)) => d,
                _ => Document::new(),
            },
            _ => doc! { op: parts },
        };
        Filter::from_parts(doc, error).scoped(scope)
    }

    /// The filter document as it will be sent.
    pub fn as_document(&self) -> &Document {
        &self.doc
    }

    /// The document and a value that failed to encode, if any.
    pub(crate) fn into_parts(self) -> (Document, Option<Deferred>) {
        (self.doc, self.error)
    }

    pub(crate) fn into_document(self, collection: &str) -> crate::Result<Document> {
        match self.error {
            Some(e) => Err(e.into_error(collection)),
            None => Ok(self.doc),
        }
    }
}

impl<Root> Default for Filter<Root> {
    fn default() -> Self {
        Filter::all()
    }
}

impl<Root> Clone for Filter<Root> {
    fn clone(&self) -> Self {
        Filter::from_parts(self.doc.clone(), self.error.clone()).scoped(self.scope)
    }
}

impl<Root> fmt::Debug for Filter<Root> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Filter({})", self.doc)
    }
}

impl<Root> BitAnd for Filter<Root> {
    type Output = Filter<Root>;
    fn bitand(self, rhs: Self) -> Self {
        self.and(rhs)
    }
}

impl<Root> BitOr for Filter<Root> {
    type Output = Filter<Root>;
    fn bitor(self, rhs: Self) -> Self {
        self.or(rhs)
    }
}

impl<Root> Not for Filter<Root> {
    type Output = Filter<Root>;
    fn not(self) -> Self {
        Filter::from_parts(doc! { "$nor": [self.doc] }, self.error).scoped(self.scope)
    }
}

impl<Root, T, M> Field<Root, T, M> {
    fn compare(&self, op: &str, value: &impl Value<T>) -> Filter<Root> {
        let mut error = None;
        let v = encode(
            value,
            || format!("filter value for `{}`", self.path()),
            &mut error,
        );
        let doc = match op {
            "$eq" => literal::eq(self.path(), v),
            "$ne" => literal::ne(self.path(), v),
            _ => doc! { self.path(): { op: v } },
        };
        Filter::from_parts(doc, error)
    }

    fn compare_many<V: Value<T>>(
        &self,
        build: fn(&str, Vec<Bson>) -> Document,
        values: impl IntoIterator<Item = V>,
    ) -> Filter<Root> {
        let mut error = None;
        let vs: Vec<Bson> = values
            .into_iter()
            .map(|v| {
                encode(
                    &v,
                    || format!("filter value for `{}`", self.path()),
                    &mut error,
                )
            })
            .collect();
        Filter::from_parts(build(self.path(), vs), error)
    }

    /// Equal to `value`: `{path: value}` for a value that can only be read as itself (an id, a
    /// string, a number, a date, a boolean, binary data, null: the form MongoDB serves from its
    /// fast path for lookups by `_id`), `{path: {$eq: value}}` for a document, an array or a
    /// regular expression, which would otherwise be read as operators or a pattern. On an
    /// array field this is whole-array equality; use [`Field::contains`] to match one element.
    pub fn eq(&self, value: impl Value<T>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare("$eq", &value)
    }

    /// Not equal to `value` (`$ne`; `{$nor: [{path: {$eq: value}}]}` for a regular expression,
    /// which MongoDB refuses after `$ne`).
    pub fn ne(&self, value: impl Value<T>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare("$ne", &value)
    }

    /// Greater than `value` (`$gt`).
    pub fn gt(&self, value: impl Value<T>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare("$gt", &value)
    }

    /// Greater than or equal to `value` (`$gte`).
    pub fn gte(&self, value: impl Value<T>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare("$gte", &value)
    }

    /// Less than `value` (`$lt`).
    pub fn lt(&self, value: impl Value<T>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare("$lt", &value)
    }

    /// Less than or equal to `value` (`$lte`).
    pub fn lte(&self, value: impl Value<T>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare("$lte", &value)
    }

    /// Equal to one of `values` (`{path: {$in: values}}`).
    ///
    /// Every value is matched literally, as [`Field::eq`] matches it: a regular expression
    /// among the values matches a stored regular expression, never as a pattern, and a
    /// document with `$` keys matches an equal document, never as operators. Such values are
    /// sent as `$eq` conditions beside the `$in` of the others
    /// (`{$or: [{path: {$in: [...]}}, {path: {$eq: /.*/}}]}`), since MongoDB reads them as
    /// patterns or operators inside `$in`. One command either way.
    pub fn is_in<V: Value<T>>(&self, values: impl IntoIterator<Item = V>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare_many(literal::is_in, values)
    }

    /// Equal to none of `values` (`$nin`); values are matched literally, as in
    /// [`Field::is_in`] (`{$nor: [...]}` when a value would otherwise be read as a pattern or
    /// operators).
    pub fn not_in<V: Value<T>>(&self, values: impl IntoIterator<Item = V>) -> Filter<Root>
    where
        M: Queryable,
    {
        self.compare_many(literal::not_in, values)
    }

    /// The field is present (`$exists: true`) or absent (`$exists: false`).
    pub fn exists(&self, present: bool) -> Filter<Root>
    where
        M: Queryable,
    {
        Filter::from_parts(doc! { self.path(): { "$exists": present } }, None)
    }

    /// Ascending sort on this field.
    pub fn asc(&self) -> Sort<Root>
    where
        M: Queryable,
    {
        Sort::from_doc(doc! { self.path(): 1 })
    }

    /// Descending sort on this field.
    pub fn desc(&self) -> Sort<Root>
    where
        M: Queryable,
    {
        Sort::from_doc(doc! { self.path(): -1 })
    }
}

impl<Root, E, M> Field<Root, Vec<E>, M> {
    /// The array holds an element equal to `value` (a multikey match: `{subjects: v}`, with `$eq`
    /// for a value that could be read as more than itself, as [`Field::eq`] sends it).
    pub fn contains(&self, value: impl Value<E>) -> Filter<Root>
    where
        M: Queryable,
    {
        let mut error = None;
        let v = encode(
            &value,
            || format!("filter value for `{}`", self.path()),
            &mut error,
        );
        Filter::from_parts(literal::eq(self.path(), v), error)
    }

    /// The array holds every one of `values` (`$all`); values are matched literally, as in
    /// [`Field::is_in`].
    pub fn contains_all<V: Value<E>>(&self, values: impl IntoIterator<Item = V>) -> Filter<Root>
    where
        M: Queryable,
    {
        let mut error = None;
        let vs: Vec<Bson> = values
            .into_iter()
            .map(|v| {
                encode(
                    &v,
                    || format!("filter value for `{}`", self.path()),
                    &mut error,
                )
            })
            .collect();
        Filter::from_parts(literal::all(self.path(), vs), error)
    }

    /// The array has exactly `len` elements (`$size`).
    pub fn has_len(&self, len: u32) -> Filter<Root>
    where
        M: Queryable,
    {
        Filter::from_parts(doc! { self.path(): { "$size": i64::from(len) } }, None)
    }
}

impl<Root, T, M> Field<Root, Option<T>, M> {
    /// The field is `null` or missing (`{field: {$eq: null}}`).
    pub fn is_none(&self) -> Filter<Root>
    where
        M: Queryable,
    {
        Filter::from_parts(doc! { self.path(): { "$eq": Bson::Null } }, None)
    }
}

/// A sort order on the model `Root`: `Book::pages().desc()`, chained with [`Sort::then`].
pub struct Sort<Root> {
    doc: Document,
    _root: PhantomData<fn() -> Root>,
}

impl<Root> Sort<Root> {
    fn from_doc(doc: Document) -> Self {
        Sort {
            doc,
            _root: PhantomData,
        }
    }

    /// Sorts by `next` among documents that this sort ranks equal.
    pub fn then(mut self, next: Sort<Root>) -> Self {
        self.doc.extend(next.doc);
        self
    }

    /// The sort document as it will be sent.
    pub fn as_document(&self) -> &Document {
        &self.doc
    }

    pub(crate) fn into_document(self) -> Document {
        self.doc
    }
}

impl<Root> Clone for Sort<Root> {
    fn clone(&self) -> Self {
        Sort::from_doc(self.doc.clone())
    }
}

impl<Root> fmt::Debug for Sort<Root> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sort({})", self.doc)
    }
}

/// Which fields a query returns. Decode the result into a type that has just those fields
/// (see `Find::into_type`), or into the model when the left-out fields have defaults.
pub struct Projection<Root> {
    doc: Document,
    _root: PhantomData<fn() -> Root>,
}

impl<Root> Projection<Root> {
    /// Returns only `field` (and `_id`).
    pub fn include<T, M: Queryable>(field: &Field<Root, T, M>) -> Self {
        Projection {
            doc: doc! { field.path(): 1 },
            _root: PhantomData,
        }
    }

    /// Returns everything but `field`.
    pub fn exclude<T, M: Queryable>(field: &Field<Root, T, M>) -> Self {
        Projection {
            doc: doc! { field.path(): 0 },
            _root: PhantomData,
        }
    }

    /// Also returns `field`.
    pub fn and<T, M: Queryable>(mut self, field: &Field<Root, T, M>) -> Self {
        self.doc.insert(field.path(), 1);
        self
    }

    /// Also leaves out `field`.
    pub fn and_not<T, M: Queryable>(mut self, field: &Field<Root, T, M>) -> Self {
        self.doc.insert(field.path(), 0);
        self
    }

    /// The projection document as it will be sent.
    pub fn as_document(&self) -> &Document {
        &self.doc
    }

    pub(crate) fn into_document(self) -> Document {
        self.doc
    }
}

impl<Root> Clone for Projection<Root> {
    fn clone(&self) -> Self {
        Projection {
            doc: self.doc.clone(),
            _root: PhantomData,
        }
    }
}

impl<Root> fmt::Debug for Projection<Root> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Projection({})", self.doc)
    }
}
