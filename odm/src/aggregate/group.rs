//! `$group` with typed accumulators, and `$project` into a view, each checked against the
//! fields of the output type.
//!
//! Every output field is named together with a function reaching it in the output type
//! (`|v: &View| &v.total`), which [`group!`](crate::group) and [`project!`](crate::project)
//! write: a field the view lacks, or of another type than the accumulator produces, is a
//! compile error at the field's name.

use std::marker::PhantomData;

use bson::{doc, Bson, Document};

use super::expr::{Expr, IntoExpr};
use crate::query::Deferred;

/// An accumulator of `$group` over the documents of shape `C`, producing an `O`.
pub struct Acc<C, O> {
    value: Bson,
    error: Option<Deferred>,
    _types: PhantomData<fn() -> (C, O)>,
}

impl<C, O> std::fmt::Debug for Acc<C, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Acc({})", self.value)
    }
}

fn acc<C, X, O>(op: &str, e: Expr<C, X>) -> Acc<C, O> {
    Acc {
        value: Bson::Document(doc! { op: e.value }),
        error: e.error,
        _types: PhantomData,
    }
}

/// Numbers that `$sum` and `$avg` add up, and the types of their results: a sum of
/// integers is read as an `i64` (the server widens it when it overflows), an average as an
/// `f64` (an `Option<f64>` over an `Option` field, `null` when no document has a number).
#[diagnostic::on_unimplemented(
    message = "`sum` and `avg` add up numbers, but this field holds `{Self}`",
    label = "not a numeric field",
    note = "use `count()` to count documents, `push` or `add_to_set` to collect values"
)]
pub trait Summable {
    /// The type of the sum.
    type Total;
    /// The type of the average.
    type Mean;
}

macro_rules! summable {
    ($($t:ty => $total:ty),*) => { $(
        impl Summable for $t { type Total = $total; type Mean = f64; }
        impl Summable for Option<$t> { type Total = $total; type Mean = Option<f64>; }
    )* };
}
summable!(i8 => i64, i16 => i64, i32 => i64, i64 => i64, u8 => i64, u16 => i64, u32 => i64,
    f32 => f64, f64 => f64);

/// `{$sum: expr}`: the total of a numeric field over the group.
pub fn sum<C, X: Summable>(e: impl IntoExpr<C, X>) -> Acc<C, X::Total> {
    acc("$sum", e.into_expr())
}

/// `{$avg: expr}`: the mean of a numeric field over the group.
pub fn avg<C, X: Summable>(e: impl IntoExpr<C, X>) -> Acc<C, X::Mean> {
    acc("$avg", e.into_expr())
}

/// `{$min: expr}`: the smallest value in the group.
pub fn min<C, X>(e: impl IntoExpr<C, X>) -> Acc<C, X> {
    acc("$min", e.into_expr())
}

/// `{$max: expr}`: the largest value in the group.
pub fn max<C, X>(e: impl IntoExpr<C, X>) -> Acc<C, X> {
    acc("$max", e.into_expr())
}

/// `{$first: expr}`: the value of the group's first document (in the order of a `sort` before
/// the group).
pub fn first<C, X>(e: impl IntoExpr<C, X>) -> Acc<C, X> {
    acc("$first", e.into_expr())
}

/// `{$last: expr}`: the value of the group's last document.
pub fn last<C, X>(e: impl IntoExpr<C, X>) -> Acc<C, X> {
    acc("$last", e.into_expr())
}

/// `{$push: expr}`: every value of the group, in order.
pub fn push<C, X>(e: impl IntoExpr<C, X>) -> Acc<C, Vec<X>> {
    acc("$push", e.into_expr())
}

/// `{$addToSet: expr}`: the distinct values of the group, in no particular order.
pub fn add_to_set<C, X>(e: impl IntoExpr<C, X>) -> Acc<C, Vec<X>> {
    acc("$addToSet", e.into_expr())
}

/// `{$sum: 1}`: the number of documents in the group.
pub fn count<C>() -> Acc<C, i64> {
    Acc {
        value: Bson::Document(doc! { "$sum": 1 }),
        error: None,
        _types: PhantomData,
    }
}

/// A `$group` stage over the documents of shape `C`, whose results decode as `Out`.
///
/// Written with [`group!`](crate::group), which expands to a function adding the key and the
/// fields to the group that [`Aggregate::group`](super::Aggregate::group) starts, so that the
/// documents' type is known before the key and the accumulators are checked against it.
pub struct Group<C, Out> {
    id: Bson,
    fields: Document,
    error: Option<Deferred>,
    _types: PhantomData<fn() -> (C, Out)>,
}

impl<C, Out> std::fmt::Debug for Group<C, Out> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Group(_id: {}, {})", self.id, self.fields)
    }
}

impl<C, Out> Default for Group<C, Out> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C, Out> Group<C, Out> {
    /// One group of every document (`_id: null`), until a key is given.
    pub fn new() -> Self {
        Group {
            id: Bson::Null,
            fields: Document::new(),
            error: None,
            _types: PhantomData,
        }
    }

    fn keep(&mut self, error: Option<Deferred>) {
        if self.error.is_none() {
            self.error = error;
        }
    }

    /// Groups by `key`, whose value lands in `_id`: the view's field reached by `_field`
    /// holds it (`#[serde(rename = "_id")]`).
    pub fn by<K>(mut self, _field: fn(&Out) -> &K, key: impl IntoExpr<C, K>) -> Self {
        let key = key.into_expr();
        self.keep(key.error);
        self.id = key.value;
        self
    }

    /// Adds `name` to a compound key (`_id: {name: key, ..}`), held by the field of the
    /// view's `_id` reached by `_field`.
    pub fn by_part<K>(
        mut self,
        name: &'static str,
        _field: fn(&Out) -> &K,
        key: impl IntoExpr<C, K>,
    ) -> Self {
        let key = key.into_expr();
        self.keep(key.error);
        if !matches!(self.id, Bson::Document(_)) {
            self.id = Bson::Document(Document::new());
        }
        if let Bson::Document(d) = &mut self.id {
            d.insert(name, key.value);
        }
        self
    }

    /// Adds the output field `name`, computed by `acc`, held by the view's field reached by
    /// `_field`.
    pub fn field<O>(mut self, name: &'static str, _field: fn(&Out) -> &O, acc: Acc<C, O>) -> Self {
        self.keep(acc.error);
        self.fields.insert(name, acc.value);
        self
    }

    pub(crate) fn into_stage(self) -> (Document, Option<Deferred>) {
        let mut group = doc! { "_id": self.id };
        group.extend(self.fields);
        (doc! { "$group": group }, self.error)
    }
}

/// A `$project` stage over the documents of shape `C` into the view `V`: each of its fields
/// from a field of `C` (`{title: "$title"}`), `_id` left out unless the view names it.
///
/// Written with [`project!`](crate::project), which expands to a function adding the fields
/// to the projection that [`Aggregate::project`](super::Aggregate::project) starts.
pub struct Project<C, V> {
    fields: Document,
    error: Option<Deferred>,
    _types: PhantomData<fn() -> (C, V)>,
}

impl<C, V> std::fmt::Debug for Project<C, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Project({})", self.fields)
    }
}

impl<C, V> Default for Project<C, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C, V> Project<C, V> {
    /// A projection of no field yet.
    pub fn new() -> Self {
        Project {
            fields: Document::new(),
            error: None,
            _types: PhantomData,
        }
    }

    /// The view's field `name`, reached by `_field`, holds `value`.
    pub fn field<O>(
        mut self,
        name: &'static str,
        _field: fn(&V) -> &O,
        value: impl IntoExpr<C, O>,
    ) -> Self {
        let value = value.into_expr();
        if self.error.is_none() {
            self.error = value.error;
        }
        self.fields.insert(name, value.value);
        self
    }

    pub(crate) fn into_stage(self) -> (Document, Option<Deferred>) {
        let mut project = Document::new();
        if !self.fields.contains_key("_id") {
            project.insert("_id", 0);
        }
        project.extend(self.fields);
        (doc! { "$project": project }, self.error)
    }
}

/// A `$group` stage decoded into a view, each output field checked against the view at
/// compile time:
///
/// ```ignore
/// use odm::aggregate::{count, sum};
/// odm::group!(PerProduct {
///     by product: Part::product(),      // _id, the view's `#[serde(rename = "_id")] product`
///     parts: count(),                   // {$sum: 1} into `parts: i64`
///     stock: sum(Part::quantity()),     // {$sum: "$quantity"} into `stock: i64`
/// })
/// ```
///
/// A compound key is written `by month: { year: year(Review::at()), month: month(Review::at()) }`
/// (`_id: {year: .., month: ..}`, into a struct with those fields); without `by`, every
/// document is one group (`_id: null`). The fields are named by their Rust names: a view's
/// `#[serde(rename)]` is not seen, except the key's rename to `_id`.
#[macro_export]
macro_rules! group {
    ($out:ty { by $key:ident : { $($part:ident : $pe:expr),+ $(,)? } $(, $f:ident : $a:expr)* $(,)? }) => {
        |g: $crate::aggregate::Group<_, $out>| g
            $(.by_part(::core::stringify!($part), $crate::aggregate::slot(|v: &$out| &v.$key.$part), $pe))+
            $(.field(::core::stringify!($f), $crate::aggregate::slot(|v: &$out| &v.$f), $a))*
    };
    ($out:ty { by $key:ident : $ke:expr $(, $f:ident : $a:expr)* $(,)? }) => {
        |g: $crate::aggregate::Group<_, $out>| g
            .by($crate::aggregate::slot(|v: &$out| &v.$key), $ke)
            $(.field(::core::stringify!($f), $crate::aggregate::slot(|v: &$out| &v.$f), $a))*
    };
    ($out:ty { $($f:ident : $a:expr),* $(,)? }) => {
        |g: $crate::aggregate::Group<_, $out>| g
            $(.field(::core::stringify!($f), $crate::aggregate::slot(|v: &$out| &v.$f), $a))*
    };
}

/// A `$project` stage into a view, each field checked against the view at compile time:
/// `odm::project!(Card { title: Book::title(), pages: Book::pages() })` sends
/// `{$project: {_id: 0, title: "$title", pages: "$pages"}}` and decodes `Card`s. A field the
/// view lacks, or of another type than the projected field, does not compile. Fields are
/// named by their Rust names (a view's `#[serde(rename)]` is not seen); name a view field
/// `_id` to keep the id.
#[macro_export]
macro_rules! project {
    ($out:ty { $($f:ident : $e:expr),* $(,)? }) => {
        |p: $crate::aggregate::Project<_, $out>| p
            $(.field(::core::stringify!($f), $crate::aggregate::slot(|v: &$out| &v.$f), $e))*
    };
}

/// The typed path of a field of a view type (a plain serde struct), for the stages after a
/// `group`, `project`, `unwind` or `lookup`: `odm::view_field!(PerProduct, stock)` is a
/// `Field<PerProduct, i64>` at `stock`, `odm::view_field!(Line, part.name)` one at `part.name`.
/// A field the view lacks does not compile. Named by the Rust names: a field stored under
/// another name (`#[serde(rename = "_id")]`, the key of a group) gives it after `as`:
/// `odm::view_field!(PerTag, tag as "_id")`.
#[macro_export]
macro_rules! view_field {
    ($view:ty, $first:ident $(. $rest:ident)* as $stored:literal) => {
        $crate::aggregate::view_field::<$view, _>(
            $stored,
            |v: &$view| &v.$first $(.$rest)*,
        )
    };
    ($view:ty, $first:ident $(. $rest:ident)*) => {
        $crate::aggregate::view_field::<$view, _>(
            ::core::concat!(::core::stringify!($first) $(, ".", ::core::stringify!($rest))*),
            |v: &$view| &v.$first $(.$rest)*,
        )
    };
}
