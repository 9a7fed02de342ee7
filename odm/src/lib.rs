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

pub mod batch;
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
mod sweep;
mod update;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use error::{Error, Result};
pub use handle::Odm;
pub use index::{IndexKey, IndexSpec, SyncReport};
pub use model::{registered_models, Embed, Model, ModelEntry};
pub use path::{Copied, Each, Field, Numeric, Optional, Single, Value, Writable};
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
/// - <a id="reference"></a>`#[reference]` on `Ref<T>` / `Option<Ref<T>>`, `#[reference(many,
///   max = N)]` on `Vec<Ref<T>>`: stored as the referenced ids; populated with one `$in` query
///   per relation and level; options `inverse = "field"` (two-way), `on_delete = "restrict" |
///   "nullify" | "pull" | "cascade"`, `allow_large = "why"` above 5,000 ids. Indexed.
/// - <a id="parent"></a>`#[parent]` on `Ref<T>` / `Option<Ref<T>>`: the child's reference to its
///   parent (one-to-squillions); indexed; `inverse`, `on_delete`; children of many parents with
///   `Odm::children`.
/// - <a id="denormalize"></a>`#[denormalize(from = "Model", fields = "a, b", ...)]`: the field
///   holds copies of fields of another model, filled on insert and updated by the ODM whenever
///   the source changes (rule of thumb 5: only for fields read much more often than written).
///   Three kinds:
///   - a summary of the source, `#[denormalize(from = "Part", fields = "name", max = 200)]
///     parts: Vec<PartSummary>`: the summary type derives [`Embed`] and holds `id: Ref<Part>`
///     plus each copied field, with the source field's exact type. An array declares `max`
///     (at most 200, or `allow_large = "why"`); a single summary (`author: AuthorSummary`)
///     does not. The summaries' ids are indexed (`parts.id_1`). Deleting a source pulls its
///     summaries from arrays, sets an `Option` summary to `null`, and is refused while a
///     required single summary names it.
///   - one field copied through a reference on this model,
///     `#[denormalize(from = "Product", via = "product", fields = "name")] product_name: String`:
///     `via` names a `Ref<Product>` or `Option<Ref<Product>>` field; one field, one value.
///   - the last N sources, `#[denormalize(from = "LogMsg", via = "host", fields = "time,
///     message", latest = 100, sort = "time")] logmsgs: Vec<LogSummary>`: `via` is the source's
///     reference to this model, `sort` (a source field, `-` for descending) orders them; N is
///     the bound (at most 200, or `allow_large = "why"`).
///
///   The copies are checked at compile time: the source is a model, each copied field exists
///   with exactly the copy's type, a summary holds `id: Ref<Source>`, `via` references the
///   right model; errors point at the attribute's strings or at the copy's type. The accessor
///   of a copy through `via` and of a `latest` array is a [`Copied`] path: it can be queried,
///   not written (the ODM writes it).
/// - <a id="frequently-updated"></a>`#[frequently_updated]`: the field changes often (a part's
///   quantity on hand), so copying it would turn every update into an update of every copy.
///   A `#[denormalize]` that copies it compiles with a warning (the `deprecated` lint) at its
///   `fields` string, which suggests referencing the model and populating it instead;
///   `#[allow(deprecated)]` on the copying struct or field accepts the cost. Not on `_id` or a
///   field serde skips.
///
/// serde's `rename` and `rename_all` are applied to every generated path.
pub use odm_derive::Model;

/// Derives [`Embed`] for a struct stored inside other documents.
///
/// Field attributes: `#[embed]` (with `max = N` on a `Vec`) on fields that are themselves
/// embedded types. serde's `rename` and `rename_all` are applied to every generated path. A
/// type with a field `id: Ref<T>` can hold summaries of `T` (`#[denormalize]` on the model that
/// embeds it). References, copies, indexes and `#[frequently_updated]` belong on models and
/// are refused here.
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
    pub use crate::path::{Copied, Each, Field, Single};
    pub use crate::populate::{Inverse, RefContainer, RefPath, RefSlots};
    pub use crate::reference::Ref;
    pub use crate::relations::{OnDelete, RefKind, ReferenceInfo};

    /// A model that `#[denormalize(from = "...")]` can copy from; every `#[derive(Model)]`
    /// implements it. The copy's generated code reaches the source's fields only through
    /// [`CopySource::fields`], so that a `from` that is not a model is one error. (No `Model`
    /// bound: a model whose `Model` impl fails is reported once, at that impl.)
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not an odm model, so nothing can be copied from it",
        label = "`from` names a type without `#[derive(Model)]`",
        note = "a copy takes its fields from a model: `from` names a struct that derives `odm::Model`"
    )]
    pub trait CopySource {
        /// A hidden type with one method per stored field, returning what the field's accessor
        /// returns. The methods of `#[frequently_updated]` fields are `#[deprecated]`: copying
        /// such a field is a warning at the copy.
        type Fields: SourceFields<Model = Self>;

        fn fields() -> Self::Fields;
    }

    /// The type of [`CopySource::Fields`], and the model it belongs to.
    pub trait SourceFields {
        type Model;
    }

    /// The collection of the source model.
    pub fn source_collection<F: SourceFields>(_source: &F) -> &'static str
    where
        F::Model: Model,
    {
        <F::Model as Model>::COLLECTION
    }

    /// The stored path of the source ids in the summaries at `path` (`parts.id`), which the
    /// index that finds the copies of a source is on.
    pub fn summary_ids_path(copies: &[CopyInfo], path: &str) -> String {
        let id = copies.iter().find_map(|c| match &c.kind {
            CopyKind::Summary { id, .. } if c.path == path => Some(id.as_str()),
            _ => None,
        });
        format!("{path}.{}", id.unwrap_or("id"))
    }

    /// The check that a value copied from `source` decodes as its type, which is the copy's.
    pub fn copy_check<R, T: serde::de::DeserializeOwned, M>(
        _source: &Field<R, T, M>,
    ) -> crate::denormalize::ValueCheck {
        crate::denormalize::ValueCheck::new(|v| {
            bson::deserialize_from_bson::<T>(v.clone())
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }

    /// The `(source path, copy path)` pairs of a copy, and their checks.
    #[allow(clippy::type_complexity)]
    pub fn copy_fields(
        all: Vec<(String, String, crate::denormalize::ValueCheck)>,
    ) -> (Vec<(String, String)>, Vec<crate::denormalize::ValueCheck>) {
        all.into_iter().map(|(from, to, c)| ((from, to), c)).unzip()
    }

    /// Reaches the copy's side of a copied field from the source's: `from.__odm_copy_in(copy)`
    /// is `copy`, and is not checked at all when the source field was already reported
    /// missing, so that a misspelt field is one error.
    pub trait CopyIn {
        fn __odm_copy_in<B>(&self, copy: B) -> B {
            copy
        }
    }
    impl<A> CopyIn for A {}

    /// A copy holds the same type as its source field.
    #[diagnostic::on_unimplemented(
        message = "the copy holds `{Self}`, but the source field holds `{T}`",
        label = "a denormalized copy must have exactly the type of the field it copies",
        note = "change the copy's type to `{T}`, or copy another field"
    )]
    pub trait SameType<T> {}
    impl<T> SameType<T> for T {}

    /// Compiles when the copy has exactly the source field's type; the stored paths of the
    /// source field and of the copy.
    pub fn copy_of<R1, T1, M1, R2, T2: SameType<T1>, M2>(
        source: &Field<R1, T1, M1>,
        copy: &Field<R2, T2, M2>,
    ) -> (String, String) {
        (source.path().to_owned(), copy.path().to_owned())
    }

    /// The typed paths into the embedded type `E` (implemented by `#[derive(Embed)]`), so
    /// that a summary is checked through the copy's accessor.
    pub trait PathsOf<E> {}

    /// A summary of the model `S`: an embedded type whose field `id` holds a `Ref<S>`
    /// (implemented by `#[derive(Embed)]` for a type with an `id` field). `ID` is the stored
    /// name of that field, by which the copies of a source are found.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot hold summaries of `{S}`: it has no `id` field",
        label = "a summary of `{S}` holds its id as `id: Ref<{S}>`",
        note = "add `id: Ref<{S}>` to `{Self}`: the ODM finds the copies of a `{S}` by it"
    )]
    pub trait SummaryOf<S> {
        const ID: &'static str;
    }

    /// The type of a summary's `id` field: `Ref<S>` for a summary of `S`.
    #[diagnostic::on_unimplemented(
        message = "a summary of `{S}` holds its id as `id: Ref<{S}>`, but this one holds `{Self}`",
        label = "the summary type's `id` field is not a `Ref<{S}>`",
        note = "the ODM finds the copies of a `{S}` by this id: declare `id: Ref<{S}>` in the summary type"
    )]
    pub trait SummaryId<S> {}
    impl<S: Model> SummaryId<S> for Ref<S> {}

    /// Compiles when the summaries (reached by their typed path) carry the source's id
    /// (`id: Ref<Source>`); the id's stored name in a summary.
    pub fn summary_id<F: SourceFields, P: PathsOf<E>, E: SummaryOf<F::Model>>(
        _source: &F,
        _summaries: &P,
    ) -> String {
        E::ID.to_owned()
    }

    /// The reference a copy follows (`via`): one reference to `P`.
    #[diagnostic::on_unimplemented(
        message = "`via` names the reference to `{P}`, but this field holds `{Self}`",
        label = "not a `Ref<{P}>` or `Option<Ref<{P}>>`",
        note = "a copied field follows one reference to its source, e.g. `#[reference] product: Ref<Product>`; the last N sources (`latest`) follow the source's `#[parent]` reference to this model"
    )]
    pub trait ViaRef<P> {}
    impl<P: Model> ViaRef<P> for Ref<P> {}
    impl<P: Model> ViaRef<P> for Option<Ref<P>> {}

    /// Compiles when `via`, on the copying model, is one reference to the source; its path.
    pub fn via_to_source<F: SourceFields, R, W: ViaRef<F::Model>, M>(
        _source: &F,
        via: &Field<R, W, M>,
    ) -> String {
        via.path().to_owned()
    }

    /// Compiles when `via`, on the source, is one reference to the copying model `P`; its
    /// path.
    pub fn via_from_source<P, R, W: ViaRef<P>, M>(via: &Field<R, W, M>) -> String {
        via.path().to_owned()
    }

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
