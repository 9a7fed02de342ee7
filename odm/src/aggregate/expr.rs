//! Typed expressions of a pipeline: a field's value (`"$path"`), a constant (`$literal`), and
//! the date parts a group key takes.

use std::marker::PhantomData;

use crate::path::{Copied, Each, Field, Kept, Queryable, ShardKeyed, Single, Value};
use crate::populate::RefPath;
use crate::query::Deferred;
use crate::reference::RefTarget;
use bson::{doc, Bson};

/// The value a path holds in the documents of a pipeline: the field's type `X` for a path that
/// reaches one value, a `Vec<X>` for a path through an array of embedded documents ([`Each`]).
pub trait Shape: Queryable {
    /// What `"$path"` evaluates to for a field of type `X`.
    type Of<X>;
}
impl Shape for Single {
    type Of<X> = X;
}
impl Shape for Copied {
    type Of<X> = X;
}
impl Shape for Kept {
    type Of<X> = X;
}
impl Shape for ShardKeyed {
    type Of<X> = X;
}
impl Shape for Each {
    type Of<X> = Vec<X>;
}

/// An aggregation expression over the documents of shape `C`, evaluating to an `O`.
///
/// Built from a field (`"$path"`: generated paths never start with `$`, and
/// [`Field::at_path`] refuses segments that do), from a constant ([`lit`], always sent as
/// `{$literal: value}`, so that a user's `"$where"` or `"$$ROOT"` stays a string), or by the
/// date helpers [`year`] and [`month`].
pub struct Expr<C, O> {
    pub(crate) value: Bson,
    pub(crate) error: Option<Deferred>,
    _types: PhantomData<fn() -> (C, O)>,
}

impl<C, O> Expr<C, O> {
    pub(crate) fn new(value: Bson, error: Option<Deferred>) -> Self {
        Expr {
            value,
            error,
            _types: PhantomData,
        }
    }

    /// The expression as it will be sent.
    pub fn as_bson(&self) -> &Bson {
        &self.value
    }
}

impl<C, O> Clone for Expr<C, O> {
    fn clone(&self) -> Self {
        Expr::new(self.value.clone(), self.error.clone())
    }
}

impl<C, O> std::fmt::Debug for Expr<C, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Expr({})", self.value)
    }
}

/// What an accumulator, a group key or a projection takes: an [`Expr`], a field of the
/// pipeline's documents (`Book::pages()`), or a reference path (`Part::product()`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an expression over the pipeline's documents `{C}` evaluating to `{O}`",
    label = "expected a field of `{C}` (or an `Expr<{C}, _>`)",
    note = "group keys, accumulators and projections take the fields of the documents at that point of the pipeline: the model's own accessors before any `group`, `project`, `unwind` or `lookup`, then the view's (`odm::view_field!(View, field)`)"
)]
pub trait IntoExpr<C, O> {
    /// The expression.
    fn into_expr(self) -> Expr<C, O>;
}

impl<C, O> IntoExpr<C, O> for Expr<C, O> {
    fn into_expr(self) -> Expr<C, O> {
        self
    }
}

fn field_path(path: &str) -> Bson {
    Bson::String(format!("${path}"))
}

impl<C, X, M: Shape> IntoExpr<C, M::Of<X>> for Field<C, X, M> {
    fn into_expr(self) -> Expr<C, M::Of<X>> {
        Expr::new(field_path(self.path()), None)
    }
}

impl<C, X, M: Shape> IntoExpr<C, M::Of<X>> for &Field<C, X, M> {
    fn into_expr(self) -> Expr<C, M::Of<X>> {
        Expr::new(field_path(self.path()), None)
    }
}

impl<C, W, R: RefTarget> IntoExpr<C, W> for RefPath<C, W, R> {
    fn into_expr(self) -> Expr<C, W> {
        Expr::new(field_path(self.path()), None)
    }
}

/// A constant: `{$literal: value}`, so that no value is ever read as a path (`"$title"`), a
/// variable (`"$$ROOT"`) or an operator (`{$where: ..}`). Takes what a field of type `O`
/// takes ([`Value`]: `&str` for a `String`).
pub fn lit<C, O>(value: impl Value<O>) -> Expr<C, O> {
    match value.to_bson() {
        Ok(v) => Expr::new(Bson::Document(doc! { "$literal": v }), None),
        Err(e) => Expr::new(
            Bson::Null,
            Some(Deferred::new(
                "a constant of the pipeline".to_owned(),
                e.to_string(),
            )),
        ),
    }
}

/// The year of a date (`{$year: date}`, UTC).
pub fn year<C>(date: impl IntoExpr<C, bson::DateTime>) -> Expr<C, i32> {
    date_part("$year", date.into_expr())
}

/// The month of a date, 1 to 12 (`{$month: date}`, UTC).
pub fn month<C>(date: impl IntoExpr<C, bson::DateTime>) -> Expr<C, i32> {
    date_part("$month", date.into_expr())
}

fn date_part<C, O>(op: &str, date: Expr<C, bson::DateTime>) -> Expr<C, O> {
    Expr::new(Bson::Document(doc! { op: date.value }), date.error)
}
