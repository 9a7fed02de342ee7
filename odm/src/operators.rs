//! The query operators beyond comparisons with a value: a field compared with another field
//! of the same document (`$expr`), a field's stored BSON type (`$type`), and the remainder of
//! an integer field (`$mod`). Each is typed: two fields compared hold the same type and one
//! value per document, a remainder is of an integer field.
//!
//! ```
//! # use odm::prelude::*;
//! use odm::bson::spec::ElementType;
//! #[derive(Model, Serialize, Deserialize)]
//! #[odm(collection = "parts")]
//! struct Part {
//!     #[serde(rename = "_id")]
//!     id: i32,
//!     stock: i32,
//!     reorder_at: i32,
//!     code: String,
//! }
//! // Parts whose stock is below their own reorder point.
//! let low = Part::stock().lt_field(&Part::reorder_at());
//! assert_eq!(
//!     low.as_document(),
//!     &odm::bson::doc! { "$expr": { "$lt": ["$stock", "$reorder_at"] } }
//! );
//! // Codes some other program stored as numbers, and every tenth part.
//! let odd = Part::code().has_type(ElementType::Int32);
//! let tenth = Part::id_field().modulo(10, 0);
//! # let _ = (odd, tenth);
//! ```

use bson::spec::ElementType;
use bson::{doc, Bson};

use crate::path::{Copied, Field, Kept, Queryable, ShardKeyed, Single, Stamped};
use crate::query::{Deferred, Filter};

/// Path markers that address one value per document, which an expression can compare: all
/// but [`Each`](crate::path::Each), whose path goes through an array.
#[diagnostic::on_unimplemented(
    message = "a path marked `{Self}` addresses every element of an array, not one value of the document",
    label = "a path through an array",
    note = "a comparison of two fields (`$expr`) reads one value of each in the document; compare fields outside arrays, or filter on the array's elements with `any(|e| ...)`"
)]
pub trait OneValue {}
impl OneValue for Single {}
impl OneValue for Copied {}
impl OneValue for Kept {}
impl OneValue for ShardKeyed {}
impl OneValue for Stamped {}

/// Field types whose remainder the server computes (`$mod`): integers, and `Option`s of them.
#[diagnostic::on_unimplemented(
    message = "`modulo` is the remainder of an integer, but this field holds `{Self}`",
    label = "not an integer field",
    note = "`modulo` is for fields of an integer type (or an `Option` of one); the server would truncate a float first"
)]
pub trait Integer {}
macro_rules! integer {
    ($($t:ty),*) => { $( impl Integer for $t {} impl Integer for Option<$t> {} )* };
}
integer!(i8, i16, i32, i64, u8, u16, u32);

impl<Root, T, M> Field<Root, T, M> {
    /// `{$expr: {op: ["$self", "$other"]}}`: a comparison the server evaluates per document,
    /// with the aggregation order of BSON types (a missing field is below every value).
    fn against<N>(&self, op: &str, other: &Field<Root, T, N>) -> Filter<Root> {
        let (a, b) = (format!("${}", self.path()), format!("${}", other.path()));
        Filter::from_parts(doc! { "$expr": { op: [a, b] } }, None)
    }

    /// Equal to `other`, a field of the same document (`$expr` with `$eq`).
    pub fn eq_field<N>(&self, other: &Field<Root, T, N>) -> Filter<Root>
    where
        M: OneValue,
        N: OneValue,
    {
        self.against("$eq", other)
    }

    /// Not equal to `other` (`$expr` with `$ne`).
    pub fn ne_field<N>(&self, other: &Field<Root, T, N>) -> Filter<Root>
    where
        M: OneValue,
        N: OneValue,
    {
        self.against("$ne", other)
    }

    /// Greater than `other` (`$expr` with `$gt`).
    pub fn gt_field<N>(&self, other: &Field<Root, T, N>) -> Filter<Root>
    where
        M: OneValue,
        N: OneValue,
    {
        self.against("$gt", other)
    }

    /// Greater than or equal to `other` (`$expr` with `$gte`).
    pub fn gte_field<N>(&self, other: &Field<Root, T, N>) -> Filter<Root>
    where
        M: OneValue,
        N: OneValue,
    {
        self.against("$gte", other)
    }

    /// Less than `other` (`$expr` with `$lt`).
    pub fn lt_field<N>(&self, other: &Field<Root, T, N>) -> Filter<Root>
    where
        M: OneValue,
        N: OneValue,
    {
        self.against("$lt", other)
    }

    /// Less than or equal to `other` (`$expr` with `$lte`).
    pub fn lte_field<N>(&self, other: &Field<Root, T, N>) -> Filter<Root>
    where
        M: OneValue,
        N: OneValue,
    {
        self.against("$lte", other)
    }
}

impl<Root, T, M> Field<Root, T, M> {
    /// The stored value has the BSON type `ty` (`{path: {$type: n}}`, by the type's number):
    /// finds the documents another program wrote with another type than the model's.
    pub fn has_type(&self, ty: ElementType) -> Filter<Root>
    where
        M: Queryable,
    {
        let number = Bson::Int32(i32::from(ty as u8));
        Filter::from_parts(doc! { self.path(): { "$type": number } }, None)
    }
}

impl<Root, T, M> Field<Root, T, M> {
    /// The value divided by `divisor` leaves `remainder` (`{path: {$mod: [divisor,
    /// remainder]}}`). A divisor of 0, which the server refuses, is an [`Error::Encode`]
    /// when the query runs, before anything is sent.
    ///
    /// [`Error::Encode`]: crate::Error::Encode
    pub fn modulo(&self, divisor: i64, remainder: i64) -> Filter<Root>
    where
        T: Integer,
        M: Queryable,
    {
        let error = (divisor == 0).then(|| {
            Deferred::new(
                format!("`modulo` of `{}`", self.path()),
                "the divisor is 0".to_owned(),
            )
        });
        Filter::from_parts(
            doc! { self.path(): { "$mod": [divisor, remainder] } },
            error,
        )
    }
}
