//! What a `Ref<T>` may name.
//!
//! `Ref<T>` holds `T`'s id, so the type must say what that id is: [`RefTarget`]. Every model
//! is one (its `Id`). So are embedded types (by their derive) and the plain values the derives
//! recognise (here), with an id no document holds: a `Ref` to one of them is then a type like
//! any other, and the one error is the derive's check that the target is a
//! `odm::rules::ReferenceTarget`, at the field, instead of one per use of an ill-formed `Ref`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};

use crate::model::Model;

/// A type `Ref<T>` can be written with. Only a [`Model`] can be referenced: the others are
/// here so that a mistaken `Ref` is reported once, as a missing `odm::rules::ReferenceTarget`.
pub trait RefTarget: 'static {
    /// What the `Ref` holds: the model's `Id`, or [`NotAModel`].
    type Id: Serialize + DeserializeOwned + Clone + Debug + Send + Sync + 'static;

    /// A populated reference's document, serialized by [`expanded`](crate::expanded). Only a
    /// model's reference can be populated; the others write nothing but an error.
    #[doc(hidden)]
    fn serialize_loaded<S: Serializer>(doc: &Self, serializer: S) -> Result<S::Ok, S::Error>
    where
        Self: Sized,
    {
        let _ = doc;
        let _ = serializer;
        Err(serde::ser::Error::custom(
            "only a model's reference is populated",
        ))
    }
}

impl<T: Model> RefTarget for T {
    type Id = T::Id;

    fn serialize_loaded<S: Serializer>(doc: &T, serializer: S) -> Result<S::Ok, S::Error> {
        doc.serialize(serializer)
    }
}

/// The "id" of a `Ref` to something that is not a model, which cannot compile past the
/// `odm::rules::ReferenceTarget` check: no document holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NotAModel {}

macro_rules! not_models {
    ($($t:ty),* $(,)?) => {
        $(impl RefTarget for $t {
            type Id = NotAModel;
        })*
    };
}

not_models!(
    NotAModel,
    bool,
    char,
    String,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    bson::oid::ObjectId,
    bson::DateTime,
    bson::Document,
    bson::Bson,
    bson::Uuid,
    bson::Decimal128,
    bson::Binary,
    bson::Timestamp,
    bson::Regex,
);

impl<T: 'static> RefTarget for Vec<T> {
    type Id = NotAModel;
}
impl<T: 'static> RefTarget for VecDeque<T> {
    type Id = NotAModel;
}
impl<T: 'static> RefTarget for Option<T> {
    type Id = NotAModel;
}
impl<K: 'static, V: 'static, S: 'static> RefTarget for HashMap<K, V, S> {
    type Id = NotAModel;
}
impl<K: 'static, V: 'static> RefTarget for BTreeMap<K, V> {
    type Id = NotAModel;
}
impl<T: 'static, S: 'static> RefTarget for HashSet<T, S> {
    type Id = NotAModel;
}
impl<T: 'static> RefTarget for BTreeSet<T> {
    type Id = NotAModel;
}
