//! # odm
//!
//! A MongoDB ODM in which schema-design decisions are declared on plain structs, checked at
//! compile time, and carried out correctly at run time.
//!
//! ```no_run
//! use odm::prelude::*;
//!
//! #[derive(Model, Serialize, Deserialize, Debug)]
//! #[odm(collection = "books")]
//! struct Book {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     title: String,
//!     #[index(unique)]
//!     isbn: String,
//!     #[embed]
//!     publisher: Publisher,
//! }
//!
//! #[derive(Embed, Serialize, Deserialize, Debug)]
//! struct Publisher {
//!     name: String,
//!     city: String,
//! }
//!
//! # async fn run() -> odm::Result<()> {
//! let odm = Odm::connect("mongodb://127.0.0.1:27017", "library").await?;
//! odm.sync_indexes().await?;
//! let everymans = odm
//!     .find(Book::publisher().name().eq("Everyman's Library"))
//!     .sort(Book::title().asc())
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! The guide (the `book/` directory of the repository) explains each schema-design pattern and
//! the commands every operation sends.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod decode;
pub mod denormalize;
mod error;
mod handle;
pub mod index;
mod keys;
mod model;
pub mod monitor;
pub mod ops;
pub mod path;
pub mod populate;
pub mod query;
mod reference;
pub mod relations;
mod update;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use error::{Error, Result};
pub use handle::Odm;
pub use index::{IndexKey, IndexSpec, SyncReport};
pub use model::{registered_models, Embed, Model, ModelEntry};
pub use path::{Each, Field, Numeric, Optional, Single, Value, Writable};
pub use populate::{Dangling, Populate, RefPath};
pub use query::{Filter, Projection, Sort};
pub use reference::Ref;
pub use relations::{OnDelete, TransactionMode};
pub use update::Update;

/// Derives [`Model`] for a struct stored in a collection.
///
/// # Container attributes
///
/// - <a id="collection"></a>`#[odm(collection = "books")]`: the collection name. Default: the
///   struct name in snake case with an `s` added (`LogMessage` -> `log_messages`).
/// - <a id="compound-index"></a>`#[odm(index(keys = "book, -user", unique, sparse, name = "..."))]`:
///   a compound index; keys are field names (dotted into `#[embed]` fields), `-` for descending.
///
/// # Field attributes
///
/// - `#[serde(rename = "_id")]` (or a field named `_id`): the id. Required.
/// - <a id="index"></a>`#[index]`, `#[index(unique)]`, `#[index(sparse)]`, `#[index(desc)]`,
///   `#[index(text)]`, `#[index(name = "...")]`, `#[index(expire_after_secs = N)]`.
/// - <a id="embed"></a>`#[embed]`: the field holds a type deriving [`Embed`] (or an `Option` or
///   `Vec` of it); typed paths reach into it (`Book::publisher().name()`).
///
/// serde's `rename` and `rename_all` are applied to every generated path.
pub use odm_derive::Model;

/// Derives [`Embed`] for a struct stored inside other documents.
///
/// Field attributes: `#[embed]` on fields that are themselves embedded types. serde's
/// `rename` and `rename_all` are applied to every generated path.
pub use odm_derive::Embed;

pub use bson;
pub use mongodb;
pub use serde;

/// The names most programs need: `use odm::prelude::*;`.
pub mod prelude {
    pub use crate::{Dangling, Embed, Field, Filter, Model, Odm, Projection, Ref, Sort, Update};
    pub use bson::oid::ObjectId;
    pub use serde::{Deserialize, Serialize};
}

/// Used by the generated code; not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::denormalize::{sub_path, CopyInfo, CopyKind};
    pub use crate::index::{IndexKey, IndexSpec};
    pub use crate::model::{Embed, Model, ModelEntry};
    pub use crate::path::{Each, Field, Single};
    pub use crate::populate::{Inverse, RefContainer, RefPath, RefSlots};
    pub use crate::reference::Ref;
    pub use crate::relations::{OnDelete, RefKind, ReferenceInfo};

    /// A copy holds the same type as its source field.
    #[diagnostic::on_unimplemented(
        message = "the copy holds `{Self}`, but the source field holds `{T}`",
        label = "a denormalized copy must have exactly the type of the field it copies",
        note = "change the copy's type to `{T}`, or copy another field"
    )]
    pub trait SameType<T> {}
    impl<T> SameType<T> for T {}

    /// Compiles when the copy has exactly the source field's type.
    pub fn copy_of<R1, T1, M1, R2, T2: SameType<T1>, M2>(
        _source: &Field<R1, T1, M1>,
        _copy: &Field<R2, T2, M2>,
    ) {
    }

    /// Compiles when a summary carries the source's id (`id: Ref<Source>`).
    pub fn summary_id<S: Model, R, M>(_id: &Field<R, Ref<S>, M>) {}

    /// Compiles when `via` is a single reference to `P`.
    pub fn via_of<P: Model, C, W: crate::populate::SingleRef<P>>(_via: &RefPath<C, W, P>) {}

    /// Compiles when `T` is a model.
    pub const fn assert_model<T: Model>() {}

    /// A reference field that holds one reference to `P`.
    #[diagnostic::on_unimplemented(
        message = "the inverse of an array of references must be a single reference back, but it holds `{Self}`",
        label = "not a `Ref<{P}>` or `Option<Ref<{P}>>`",
        note = "pair `#[reference(many, inverse = \"owner\")]` with `#[parent(inverse = \"tasks\")] owner: Ref<...>` on the other model"
    )]
    pub trait SingleRefTo<P> {}
    impl<P: Model> SingleRefTo<P> for Ref<P> {}
    impl<P: Model> SingleRefTo<P> for Option<Ref<P>> {}

    /// A reference field that holds an array of references to `P`.
    #[diagnostic::on_unimplemented(
        message = "the inverse of a `#[parent]` must be an array of references back, but it holds `{Self}`",
        label = "not a `Vec<Ref<{P}>>`",
        note = "pair `#[parent(inverse = \"tasks\")]` with `#[reference(many, inverse = \"owner\")] tasks: Vec<Ref<...>>` on the other model"
    )]
    pub trait ManyRefsTo<P> {}
    impl<P: Model> ManyRefsTo<P> for Vec<Ref<P>> {}

    pub use bson::oid::ObjectId;
    pub use inventory;
    pub use std::marker::PhantomData;
    pub use std::ops::Deref;
    pub use std::option::Option;
    pub use std::string::String;
    pub use std::vec::Vec;

    /// Picks an id generator by the id's type: `ObjectId` ids are generated, others are not.
    /// Resolved at compile time by method-call autoref (`(&IdGen::<X>::NEW).generate()`).
    #[derive(Debug)]
    pub struct IdGen<T>(PhantomData<T>);

    impl<T> IdGen<T> {
        pub const NEW: Self = IdGen(PhantomData);
    }

    pub trait GenerateObjectId {
        fn generate(&self) -> Option<ObjectId>;
    }

    impl GenerateObjectId for IdGen<ObjectId> {
        fn generate(&self) -> Option<ObjectId> {
            Some(ObjectId::new())
        }
    }

    pub trait GenerateNothing<T> {
        fn generate(&self) -> Option<T>;
    }

    impl<T> GenerateNothing<T> for &IdGen<T> {
        fn generate(&self) -> Option<T> {
            None
        }
    }

    /// A type is either stored on its own (a `Model`) or inside others (an `Embed`), never
    /// both: both derives implement this trait, so deriving both is a conflict.
    pub trait ModelOrEmbedNotBoth {}
}

/// The README's example, compiled as a doctest so that it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
