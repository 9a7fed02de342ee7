//! Typed field paths.
//!
//! `#[derive(Model)]` gives every field an accessor (`Book::title()`), and `#[derive(Embed)]`
//! gives every embedded field one below its parent (`Book::publisher().name()`). The accessors
//! return [`Field`] values that know the stored path (serde renames applied) and the field's
//! Rust type, so filters, sorts, projections and updates built from them are checked by the
//! compiler: a misspelt field does not compile, and a value of the wrong type does not either.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use bson::Bson;
use serde::Serialize;

use crate::array_filters::ArrayFilters;

/// Marker: the path reaches one value per document (no array on the way), so it can be
/// written with `$set`, `$inc`, ...
#[derive(Debug, Clone, Copy)]
pub enum Single {}

/// Marker: the path goes through an array of embedded documents (`reviews.user`), so it
/// matches each element in queries but cannot be the target of a plain `$set`.
#[derive(Debug, Clone, Copy)]
pub enum Each {}

/// Marker: the field is a denormalized copy kept by odm (`#[denormalize(via = ...)]` or
/// `#[denormalize(latest = N, ...)]`): it can be queried, sorted and projected like any field,
/// but not written: write its source, or the reference it follows, and odm updates the copy.
#[derive(Debug, Clone, Copy)]
pub enum Copied {}

/// Marker: the path goes through the element of an array that the update's filter matched,
/// the positional `$` (`referrers.$.count`): it can be written by an update, but not queried.
/// See [`Field::matched`].
#[derive(Debug, Clone, Copy)]
pub enum Matched {}

/// Marker: the path goes through every element of an array (`referrers.$[].count`) or through
/// the elements matching a condition (`referrers.$[e0].count` with its `arrayFilters`): it can
/// be written by an update, but not queried. See [`Field::each`] and [`Field::each_where`].
#[derive(Debug, Clone, Copy)]
pub enum Elements {}

/// Marker: the field is a tree's `parent` or `ancestors` (`#[odm(tree)]`), kept by odm: it can
/// be queried, sorted and projected like any field, but not written: move the node with
/// `odm.tree::<Model>().move_under(..)`, and odm rewrites both fields of the whole subtree.
#[derive(Debug, Clone, Copy)]
pub enum Kept {}

/// Marker: the field is part of the model's shard key (`#[odm(shard_key(...))]`) without
/// `mutable`: it can be queried, sorted and projected, but not written by a typed update,
/// which would move the document to another shard. Replace the document, or declare the key
/// `mutable` to let updates move it.
#[derive(Debug, Clone, Copy)]
pub enum ShardKeyed {}

/// Marker: the field is a version or a timestamp (`#[odm(version)]`, `#[odm(created_at)]`,
/// `#[odm(updated_at)]`), which every write of the ODM keeps: it can be queried, sorted and
/// projected, but not written. See [`crate::versioning`].
#[derive(Debug, Clone, Copy)]
pub enum Stamped {}

/// A typed path to a field of the model `Root`, holding values of type `T`.
///
/// `M` is [`Single`] for a path that addresses one value per document, [`Each`] for a path
/// through an array of embedded documents, [`Copied`] for a copy odm keeps, and [`Matched`] or
/// [`Elements`] for a path through the elements an update picks.
pub struct Field<Root, T, M = Single> {
    path: Cow<'static, str>,
    max: Option<u32>,
    /// The conditions of the filtered element segments (`$[e0]`) on the way.
    filters: ArrayFilters,
    _marker: Types<Root, T, M>,
}

/// The type parameters of a [`Field`], which holds no value of them.
type Types<Root, T, M> = PhantomData<fn() -> (Root, T, M)>;

impl<Root, T, M> Field<Root, T, M> {
    /// A top-level field; used by the generated accessors.
    #[doc(hidden)]
    pub const fn top(path: &'static str) -> Self {
        Field {
            path: Cow::Borrowed(path),
            max: None,
            filters: ArrayFilters::new(),
            _marker: PhantomData,
        }
    }

    /// The declared bound of an array field (`#[embed(max = N)]`, `#[reference(many, max = N)]`);
    /// used by the generated accessors.
    #[doc(hidden)]
    pub fn bounded(mut self, max: u32) -> Self {
        self.max = Some(max);
        self
    }

    /// The declared bound of this array field, if any.
    pub fn max_len(&self) -> Option<u32> {
        self.max
    }

    /// A path odm built itself (from generated paths): not checked.
    pub(crate) fn trusted(path: impl Into<Cow<'static, str>>) -> Self {
        Field {
            path: path.into(),
            max: None,
            filters: ArrayFilters::new(),
            _marker: PhantomData,
        }
    }

    /// The path as stored in MongoDB (`publisher.name`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A field below this one; used by the generated accessors of embedded types.
    #[doc(hidden)]
    pub fn child<U, M2>(&self, name: &str) -> Field<Root, U, M2> {
        // An empty path is the element of an array seen on its own (`any`, `each_where`).
        let path = match self.path.as_ref() {
            "" => name.to_owned(),
            parent => {
                // Sized once: this runs for every nested path of every typed query.
                let mut path = String::with_capacity(parent.len() + 1 + name.len());
                path.push_str(parent);
                path.push('.');
                path.push_str(name);
                path
            }
        };
        self.below(path)
    }

    /// A path below this one that keeps its element conditions.
    pub(crate) fn below<U, M2>(&self, path: String) -> Field<Root, U, M2> {
        Field {
            path: Cow::Owned(path),
            max: None,
            filters: self.filters.clone(),
            _marker: PhantomData,
        }
    }

    /// The conditions of the filtered element segments on this path.
    pub(crate) fn array_filters(&self) -> &ArrayFilters {
        &self.filters
    }

    pub(crate) fn array_filters_mut(&mut self) -> &mut ArrayFilters {
        &mut self.filters
    }
}

/// A field is a reference to itself: what takes `impl AsRef<Field<..>>` (a [`Quota`]'s
/// fields) takes a field, or the typed paths into an embedded document, which hold one.
///
/// [`Quota`]: crate::counters::Quota
impl<Root, T, M> AsRef<Field<Root, T, M>> for Field<Root, T, M> {
    fn as_ref(&self) -> &Self {
        self
    }
}

impl<Root, T, M> Clone for Field<Root, T, M> {
    fn clone(&self) -> Self {
        Field {
            path: self.path.clone(),
            max: self.max,
            filters: self.filters.clone(),
            _marker: PhantomData,
        }
    }
}

impl<Root, T, M> fmt::Debug for Field<Root, T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Field({})", self.path)
    }
}

impl<Root, T, M> fmt::Display for Field<Root, T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)
    }
}

/// A value that may be compared with, or stored in, a field of type `T`.
///
/// Implemented for `T` itself, for `&T`, for `&str` where `T` is `String`, and for `T` where
/// the field is an `Option<T>`. Values are encoded as BSON values and are never read as query
/// operators: a user-supplied document `{"$gt": ""}` is matched literally.
#[diagnostic::on_unimplemented(
    message = "a `{Self}` cannot be compared with or stored in a field of type `{T}`",
    label = "expected a `{T}` value",
    note = "a field takes values of its own type; `&str` also works for `String` fields, and `T` for `Option<T>` fields"
)]
pub trait Value<T> {
    /// Encodes the value.
    fn to_bson(&self) -> Result<Bson, bson::error::Error>;

    /// Encodes the value, taking it: an owned `String` becomes the BSON string without a copy.
    /// [`Field::set`] and the other updates that write one value use it.
    fn into_bson(self) -> Result<Bson, bson::error::Error>
    where
        Self: Sized,
    {
        self.to_bson()
    }
}

/// Encodes `value`: an `ObjectId` directly (through serde it is written as hex and parsed
/// back, which costs more than the rest of a filter), anything else through serde.
pub(crate) fn encode_value<V: Serialize + 'static>(value: &V) -> Result<Bson, bson::error::Error> {
    // The usual ids and values without serde's machinery (the same BSON it would give).
    let any = value as &dyn std::any::Any;
    if let Some(id) = any.downcast_ref::<bson::oid::ObjectId>() {
        return Ok(Bson::ObjectId(*id));
    }
    if let Some(s) = any.downcast_ref::<String>() {
        return Ok(Bson::String(s.clone()));
    }
    if let Some(n) = any.downcast_ref::<i32>() {
        return Ok(Bson::Int32(*n));
    }
    if let Some(n) = any.downcast_ref::<i64>() {
        return Ok(Bson::Int64(*n));
    }
    bson::serialize_to_bson(value)
}

/// Encodes `value`, taking it: as [`encode_value`], an owned `String` moved into the BSON.
pub(crate) fn encode_owned<V: Serialize + 'static>(value: V) -> Result<Bson, bson::error::Error> {
    let mut slot = Some(value);
    if let Some(s) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<String>>() {
        if let Some(s) = s.take() {
            return Ok(Bson::String(s));
        }
    }
    match &slot {
        Some(value) => encode_value(value),
        None => Ok(Bson::Null),
    }
}

impl<T: Serialize + 'static> Value<T> for T {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        encode_value(self)
    }
    fn into_bson(self) -> Result<Bson, bson::error::Error> {
        encode_owned(self)
    }
}

impl<T: Serialize + 'static> Value<T> for &T {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        encode_value(*self)
    }
}

impl Value<String> for &str {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        Ok(Bson::String((*self).to_owned()))
    }
}

impl<T: Serialize + 'static> Value<Option<T>> for T {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        encode_value(self)
    }
    fn into_bson(self) -> Result<Bson, bson::error::Error> {
        encode_owned(self)
    }
}

impl Value<Option<String>> for &str {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        Ok(Bson::String((*self).to_owned()))
    }
}

/// Field types whose values can be added to with `$inc`.
#[diagnostic::on_unimplemented(
    message = "`inc` adds to a number, but this field holds `{Self}`",
    label = "not a numeric field",
    note = "`inc` is for fields of an integer or float type (or an `Option` of one); use `set` to replace the value"
)]
pub trait Numeric {
    /// The type of an increment: the number itself, also for an `Option` field.
    type By: Serialize + 'static;

    /// For an integer narrower than 64 bits: its name, the increment and the type's bounds,
    /// which an `$inc` must not pass (the server would store a 64-bit number that the field
    /// can no longer be read from). `None` for 64-bit integers (the server refuses an overflow
    /// itself) and floats.
    #[doc(hidden)]
    fn range(_by: &Self::By) -> Option<(&'static str, i64, i64, i64)> {
        None
    }
}

/// Field types that may be missing from a document: `Option`s, which read back as `None`.
#[diagnostic::on_unimplemented(
    message = "`unset` removes the field, but a `{Self}` field cannot be missing",
    label = "not an `Option` field",
    note = "a document without this field would no longer decode; make the field an `Option`, or `set` it to a value"
)]
pub trait Optional {}
impl<T> Optional for Option<T> {}

/// Path markers whose paths can be written: [`Single`], and the element paths of updates
/// ([`Matched`], [`Elements`]).
#[diagnostic::on_unimplemented(
    message = "a path marked `{Self}` cannot be written",
    label = "not a path that can be written on its own",
    note = "`Each`: the path goes through an array of embedded documents and matches each element, not one value; write the array field itself (`set` the whole array, or `push` / `pull` elements), or name the elements to write: `matched()` (`$`), `each()` (`$[]`), `each_where(...)` (`$[e0]`)",
    note = "`Copied`: the field is a denormalized copy kept by odm; write its source, or the reference the copy follows, and odm updates the copy",
    note = "`Kept`: the field is a tree's parent or ancestors, kept by odm; move the node with `odm.tree::<Model>().move_under(..)`",
    note = "`ShardKeyed`: the field is part of the shard key, and writing it would move the document to another shard; replace the document, or declare `shard_key(.., mutable)`",
    note = "`Stamped`: the field is a version or a timestamp that every write of odm keeps (`#[odm(version)]`, `#[odm(created_at)]`, `#[odm(updated_at)]`); write the other fields"
)]
pub trait Writable {}
impl Writable for Single {}
impl Writable for Matched {}
impl Writable for Elements {}

/// Path markers whose paths can be queried, sorted and projected: all but the element paths of
/// updates ([`Matched`], [`Elements`]), which name what an update's filter picked.
#[diagnostic::on_unimplemented(
    message = "a path marked `{Self}` cannot be used in a filter, sort or projection",
    label = "an update's element path (`$`, `$[]` or `$[e0]`), not a field of the documents",
    note = "the positional paths of `matched()`, `each()` and `each_where(...)` name the array elements an update writes; to select documents by their elements, filter on the array: `any(|e| ...)` (`$elemMatch`), or on a field through it (`Book::referrers().domain().eq(...)`)"
)]
pub trait Queryable {}
impl Queryable for Single {}
impl Queryable for Each {}
impl Queryable for Copied {}
impl Queryable for Kept {}
impl Queryable for ShardKeyed {}
impl Queryable for Stamped {}

macro_rules! numeric {
    ($($t:ty),*) => { $(
        impl Numeric for $t { type By = $t; }
        impl Numeric for Option<$t> { type By = $t; }
    )* };
}
numeric!(i64, f32, f64);

/// Integers the server would widen past their type: their increments are guarded.
macro_rules! narrow {
    ($($t:ty),*) => { $(
        impl Numeric for $t {
            type By = $t;
            fn range(by: &$t) -> Option<(&'static str, i64, i64, i64)> {
                Some((stringify!($t), i64::from(*by), i64::from(<$t>::MIN), i64::from(<$t>::MAX)))
            }
        }
        impl Numeric for Option<$t> {
            type By = $t;
            fn range(by: &$t) -> Option<(&'static str, i64, i64, i64)> {
                <$t as Numeric>::range(by)
            }
        }
    )* };
}
narrow!(i8, i16, i32, u8, u16, u32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_taken_encodes_as_one_lent() {
        let owned = String::from("The Great Gatsby");
        let address = owned.as_ptr();
        let lent = encode_value(&owned).unwrap();
        match encode_owned(owned).unwrap() {
            // The string itself, not a copy.
            Bson::String(s) => {
                assert_eq!(s.as_ptr(), address);
                assert_eq!(Bson::String(s), lent);
            }
            other => panic!("expected a string, got {other:?}"),
        }
        let id = bson::oid::ObjectId::new();
        assert_eq!(encode_owned(id).unwrap(), Bson::ObjectId(id));
        assert_eq!(encode_owned(7_i64).unwrap(), encode_value(&7_i64).unwrap());
        let tags = vec!["1920s".to_owned()];
        assert_eq!(
            encode_owned(tags.clone()).unwrap(),
            encode_value(&tags).unwrap()
        );
        assert_eq!(encode_owned(None::<String>).unwrap(), Bson::Null);
    }
}
