//! The bucket pattern: the items of one key (a user's reviews) stored in one document per
//! period (a month), instead of one document per item or one ever-growing array.
//!
//! A model declares it with `#[odm(bucket(key = "user", period = "month", every = "month",
//! items = "reviews", time = "created_at"))]` (see the derive's documentation); the derive
//! implements [`Bucket`] for it, and [`Odm::buckets`](crate::Odm::buckets) gives the three
//! operations of the seed's exercise 2 ([`Buckets`]): add an item (one upsert), remove one by
//! its id (one `$pull`), and read the newest N items of a key across bucket boundaries.
//!
//! A bucket is found by equality on two stored fields, the key exactly as given and the
//! period's first instant as a date, never by a string built from them: a user named `bob.*`
//! or `a-2012` cannot reach another user's buckets, and there is nothing to escape.

mod ops;
mod period;

use bson::{Bson, DateTime};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::catalog::{IndexKey, IndexSpec};
use crate::model::Model;
use crate::path::Field;

pub use ops::{Added, Buckets};
pub use period::Every;

/// A model whose documents are buckets: `#[odm(bucket(...))]` implements it.
pub trait Bucket: Model {
    /// The type of the key field (the user).
    type Key;

    /// The type of one item (a review).
    type Item: Serialize + DeserializeOwned + Send + Sync + 'static;

    /// The stored paths and the rules of the buckets.
    fn bucket() -> BucketSpec;

    /// The items of a bucket read back (the `$slice` the read asked for).
    fn into_items(self) -> Vec<Self::Item>;

    /// The first instant of the bucket's period, as stored.
    fn period_start(&self) -> DateTime;
}

/// What `#[odm(bucket(...))]` declares, with every path resolved to its stored name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSpec {
    /// The key field (`user`).
    pub key: String,
    /// The period field (`month`), holding the first instant of the period.
    pub period: String,
    /// The length of a period.
    pub every: Every,
    /// The number of items in the bucket (`count`), which a guarded push compares with `max`.
    pub count: String,
    /// The array of items (`reviews`).
    pub items: String,
    /// The item's id, relative to an item (`id`).
    pub item_id: String,
    /// The item's time, relative to an item (`created_at`), which gives its period.
    pub item_time: String,
    /// The most items one bucket holds; a full bucket makes the next add open another bucket
    /// for the same key and period.
    pub max: Option<u32>,
}

impl BucketSpec {
    /// The spec the derive declares; used by the generated code.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub fn declared(
        key: &str,
        period: &str,
        every: Every,
        count: &str,
        items: &str,
        item_id: String,
        item_time: String,
        max: Option<u32>,
    ) -> Self {
        BucketSpec {
            key: key.to_owned(),
            period: period.to_owned(),
            every,
            count: count.to_owned(),
            items: items.to_owned(),
            item_id,
            item_time,
            max,
        }
    }

    /// The index every bucket read and write goes through: `{key: 1, period: -1}`, unique when
    /// there is one bucket per key and period (no `max`); with `max`, `{key: 1, period: -1,
    /// _id: -1}`, the order in which reads take the several buckets of a period.
    pub fn index(&self) -> IndexSpec {
        let spec = IndexSpec::on(self.key.clone(), IndexKey::Asc)
            .then(self.period.clone(), IndexKey::Desc);
        match self.max {
            None => spec.unique(),
            Some(_) => spec.then("_id", IndexKey::Desc),
        }
    }

    /// The order of reads: newest period first; with `max`, the buckets of a period newest
    /// opened first.
    pub(crate) fn bucket_order(&self) -> bson::Document {
        let mut order = bson::doc! { &self.period: -1 };
        if self.max.is_some() {
            order.insert("_id", -1);
        }
        order
    }

    /// `$sort` of a push: newest first, ties by id, so that the first N items of a bucket are
    /// its newest N.
    pub(crate) fn item_order(&self) -> bson::Document {
        let mut order = bson::Document::new();
        order.insert(self.item_time.clone(), -1);
        order.insert(self.item_id.clone(), -1);
        order
    }
}

/// The stored path of an item field below the items array (`created_at` for
/// `reviews.created_at`).
#[doc(hidden)]
pub fn item_path<R, T, M>(items: &str, field: &Field<R, T, M>) -> String {
    let path = field.path();
    path.strip_prefix(items)
        .and_then(|p| p.strip_prefix('.'))
        .unwrap_or(path)
        .to_owned()
}

/// The type of a bucket's period field: a `bson::DateTime`, the first instant of the period.
#[diagnostic::on_unimplemented(
    message = "a bucket's period is stored as a `bson::DateTime` (its first instant), not as `{Self}`",
    label = "the `period` field must be a `bson::DateTime`",
    note = "declare the field as `month: odm::bson::DateTime`; `every = \"month\"` says how long a period is"
)]
pub trait BucketPeriod {
    /// The stored instant.
    fn instant(&self) -> DateTime;
}

impl BucketPeriod for DateTime {
    fn instant(&self) -> DateTime {
        *self
    }
}

/// The type of an item's `time` field: a `bson::DateTime`, which gives the item's period.
#[diagnostic::on_unimplemented(
    message = "an item's `time` gives its bucket's period, so it is a `bson::DateTime`, not `{Self}`",
    label = "`time` must name a `bson::DateTime` field of the item",
    note = "name the item's creation date, e.g. `created_at: odm::bson::DateTime`"
)]
pub trait BucketTime {}
impl BucketTime for DateTime {}

/// The type of a bucket's count field: an integer, incremented by each add.
#[diagnostic::on_unimplemented(
    message = "a bucket's `count` is an integer that each add increments, not `{Self}`",
    label = "the count field must be an integer (`u32`, `i32`, `i64`, ...)",
    note = "declare `count: u32`, or name another integer field with `count = \"...\"`"
)]
pub trait BucketCount {}
macro_rules! count {
    ($($t:ty),*) => { $( impl BucketCount for $t {} )* };
}
count!(i32, i64, u32, u64);

/// The `_id` type of a bucket: an `ObjectId`, which the server generates when an add opens a
/// bucket (the upsert's filter names the key and the period, not the id).
#[diagnostic::on_unimplemented(
    message = "a bucket's `_id` is generated by the server when an add opens the bucket, so it is an `ObjectId`, not `{Self}`",
    label = "the `_id` of a bucket must be an `ObjectId`",
    note = "key and period are fields of their own, found by equality; the id only tells buckets apart"
)]
pub trait BucketId {}
impl BucketId for bson::oid::ObjectId {}
impl BucketId for Option<bson::oid::ObjectId> {}

/// Compiles when the item's `time` field is a `bson::DateTime`; its path below the items.
#[doc(hidden)]
pub fn time_path<R, T: BucketTime, M>(items: &str, field: &Field<R, T, M>) -> String {
    item_path(items, field)
}

/// Compiles when `T` is an integer type.
#[doc(hidden)]
pub const fn count_type<T: BucketCount>() {}

/// Compiles when `T` is an `ObjectId`.
#[doc(hidden)]
pub const fn id_type<T: BucketId>() {}

/// The stored id of an item, for messages.
pub(crate) fn show(value: &Bson) -> String {
    match value {
        Bson::String(s) => format!("{s:?}"),
        v => v.to_string(),
    }
}

/// Fails to compile, naming the closest field, when the item type `item` (whose stored fields'
/// Rust names are `fields`) has no field `name` for the bucket option `option` (`time`,
/// `item_id`).
#[doc(hidden)]
pub const fn item_field(item: &str, fields: &[&str], option: &str, name: &str) {
    use crate::rules::names;
    if !names::contains(fields, name) {
        let message = names::Message::new()
            .push("the bucket's `")
            .push(option)
            .push("` names a field of the item, and `")
            .push(item)
            .push("` has no field `")
            .push(name)
            .push("`: ")
            .push_hint(fields, name);
        panic!("{}", message.as_str());
    }
}
