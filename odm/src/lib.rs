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
#![deny(missing_docs)]

pub mod aggregate;
mod array_filters;
pub mod batch;
mod bounds;
pub mod bucket;
mod catalog;
#[cfg(feature = "console")]
#[cfg_attr(docsrs, doc(cfg(feature = "console")))]
pub mod console;
mod contention;
pub mod counters;
mod decode;
pub mod denormalize;
pub mod diagram;
mod document;
mod engine;
mod error;
pub mod follower;
pub mod geo;
mod handle;
pub mod index;
mod key_check;
pub mod keyed;
pub mod kind;
mod literal;
pub mod migrations;
mod model;
pub mod monitor;
pub mod operators;
pub mod ops;
pub mod paging;
mod path;
mod pattern;
mod pipeline;
pub mod populate;
pub mod positional;
pub mod progress;
mod query;
mod reference;
mod refusal;
pub mod relations;
pub mod rules;
pub mod search;
pub mod shard;
pub mod soft_delete;
pub mod subset;
mod sweep;
pub mod trace;
mod transaction;
pub mod tree;
mod update;
pub mod validator;
pub mod versioning;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use catalog::{registered_models, Catalog, ModelEntry};
pub use engine::Odm;
pub use error::{Error, Result};
pub use model::{Embed, Model};
pub use path::{Copied, Each, Field, Numeric, Optional, Single, Value, Writable};
pub use path::{Elements, Matched, Queryable};
pub use path::{Kept, ShardKeyed, Stamped};
pub use pattern::Pattern;
pub use query::{Filter, Projection, Sort};
pub use reference::dbref;
pub use reference::{expanded, DbRef, Expanded, PolyRef, Ref};
pub use transaction::{TransactionMode, Tx};
pub use update::Update;

/// Derives [`Model`] for a struct stored in a collection, or for an enum of kinds (see
/// [Kinds](#kinds)).
///
/// ```
/// use odm::prelude::*;
///
/// #[derive(Model, Serialize, Deserialize, Debug)]
/// #[odm(collection = "books", index(keys = "author, -year"))]
/// struct Book {
///     #[serde(rename = "_id")]
///     id: ObjectId,
///     title: String,
///     author: String,
///     year: i32,
///     #[index(unique)]
///     isbn: String,
/// }
///
/// assert_eq!(Book::COLLECTION, "books");
/// // Typed paths build the filters: a misspelt field or a value of another type is a
/// // compile error.
/// let recent = Book::author().eq("Fitzgerald").and(Book::year().gte(1925));
/// assert_eq!(
///     recent.as_document(),
///     &odm::bson::doc! { "$and": [{ "author": "Fitzgerald" }, { "year": { "$gte": 1925 } }] }
/// );
/// ```
///
/// # Container attributes
///
/// - <a id="collection"></a>`#[odm(collection = "books")]`: the collection name. Default: the
///   struct name in snake case with an `s` added (`LogMessage` -> `log_messages`).
/// - <a id="compound-index"></a>`#[odm(index(keys = "book, -user", unique, sparse, name = "..."))]`:
///   a compound index; keys are field names (dotted into `#[embed]` fields), `-` for descending.
///   A misspelt key is a compile error at the string suggesting the closest field, also for
///   the field of the embedded type in `field.subfield` (checked while compiling against the
///   names `#[derive(Embed)]` records).
/// - <a id="bucket"></a>`#[odm(bucket(key = "user", period = "month", every = "month", items =
///   "reviews", time = "created_at", max = N))]`: the documents are buckets holding the items of
///   one key for one period (`every`: hour, day, month or year); `max` bounds a bucket, a full
///   one making the next add open another. Implements [`bucket::Bucket`]; see
///   [`Odm::buckets`] for the operations and the commands they send.
/// - <a id="counters"></a>`#[odm(counters(key = "book", day = "day"))]` (options `total`,
///   `hours`, `granularity = "minute" | "hour"`): pre-aggregated counters, one document per
///   key and UTC day holding `total: i64` and `hour: odm::counters::Hours`; operations through
///   [`Odm::counters`] (one upsert per event, one `find` per read); a unique index on
///   `(key, day)`. See [`counters`].
/// - <a id="time-series"></a>`#[odm(time_series(time = "at", meta = "book", granularity =
///   "minutes"))]`: the collection is a native time-series collection, created by
///   `sync_indexes` (see [`counters::series`]); an index on `(meta, time)`.
///
/// - <a id="tree"></a>`#[odm(tree)]`, `#[odm(tree(parent = "parent", ancestors = "ancestors",
///   on_delete = "restrict" | "cascade" | "lift"))]`: the documents form a tree; the fields
///   `parent: Option<Ref<Self's model>>` and `ancestors: Vec<Ref<..>>` (or an `Option` / a `Vec`
///   of the id type) are kept by the ODM: filled on insert from the parent, rewritten for a
///   whole subtree by [`tree::Tree::move_under`] (a fixed number of commands), indexed, not
///   writable through their paths (marked [`Kept`]). See [`tree`] for the operations and the
///   commands they send.
///
/// - <a id="subset-of"></a>`#[odm(subset_of = "Movie")]`: the model holds the details of the
///   model `Movie` (the subset pattern), one document per movie under the same `_id`
///   (compile errors: another id type, a main type that is not a model, a model in two pairs).
///   Implements [`Subset`](subset::Subset); [`Odm::subset`] inserts and deletes both sides together (in a
///   transaction when the deployment has them, else details first on insert and last on
///   delete), loads the details of many movies with one `$in`, and finds and repairs details
///   left without their movie. See [`subset`] for the commands.
///
/// - <a id="schema-version"></a>`#[odm(schema_version = 2, upgrade = "upgrade_person")]`: every
///   insert and replacement stores `_v: 2` (a document without `_v` is version 1); a document
///   read with an older `_v` goes through `fn upgrade_person(from: u32, doc: &mut
///   bson::Document) -> Result<(), String>` once per version before it is decoded, in memory
///   (nothing is written back; a failure is [`Error::Decode`] at `_v`). See
///   [`migrations`] and [`Odm::migrations`] for rewriting old documents.
///
/// Every model also implements [`Validated`](validator::Validated): its documents as a `$jsonSchema`, which
/// [`Odm::sync_validators`] installs (see [`validator`]).
///
/// # Field attributes
///
/// - `#[serde(rename = "_id")]` (or a field named `_id`): the id. Required.
/// - <a id="index"></a>`#[index]`, `#[index(unique)]`, `#[index(sparse)]`, `#[index(desc)]`,
///   `#[index(text)]`, `#[index(name = "...")]`, `#[index(expire_after_secs = N)]` (a TTL
///   index: only on a date field, `bson::DateTime` or an `Option`/`Vec` of one; on another
///   type MongoDB would never expire the document, so it is a compile error).
/// - <a id="embed"></a>`#[embed]`: the field holds a type deriving [`Embed`] (or an `Option` or
///   `Vec` of it); typed paths reach into it (`Book::publisher().name()`). A field whose type
///   derives `Embed` but lacks `#[embed]` is a compile error at its type.
/// - <a id="reference"></a>`#[reference]` on `Ref<T>` / `Option<Ref<T>>`, `#[reference(many,
///   max = N)]` on `Vec<Ref<T>>`: stored as the referenced ids; populated with one `$in` query
///   per relation and level; options `inverse = "field"` (two-way), `on_delete = "restrict" |
///   "nullify" | "pull" | "cascade"`, `allow_large = "why"` above 5,000 ids. Indexed. The
///   target is a model: `Ref<String>` or a `Ref` to an `Embed` type is one compile error at the
///   target, saying what a reference targets ([`rules::ReferenceTarget`]); a misspelt
///   `inverse` suggests the closest field of the target. A `Ref` field of a model without
///   `#[reference]` or `#[parent]` is a compile error (it would be stored, but neither
///   indexed, guarded by a delete rule nor populated); store the plain id (`author_id:
///   ObjectId`) for an id the ODM should ignore.
///
///   `#[reference(poly)]` on a field holding an enum that derives [`PolyRef`] (or an `Option`
///   of one; `#[reference(poly, many, max = N)]` on a `Vec` of one): references to several
///   models, stored as DBRefs `{$ref, $id}`. Populated with one `find` per target collection
///   the documents reference (`FeedEntry::subject().populate().with::<Book>(|p| ...)` for
///   options per target); filtered with `refers_to(&value)` and `refers_to_kind::<Model>()`;
///   `on_delete` applies per target; indexed `{field.$ref: 1, field.$id: 1}` (`{field: 1}` for
///   an array). One-way: no `inverse`. `#[serde(with = "odm::dbref")]` on a `#[reference]` to
///   one model stores it as DBRefs too (see [`dbref`]).
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
///     reference to this model, `sort` (a source field, `-` for descending) orders them, and
///     is one of the copied `fields` (the array is sorted by the summaries' own copy of it);
///     N is the bound (at most 200, or `allow_large = "why"`).
///   - the N highest by a field that changes, `#[denormalize(from = "Comment", via = "post",
///     fields = "author, rating", top = 3, sort = "-rating")] top_comments: Vec<TopComment>`:
///     `latest` for an order that is not time (`sort` descending, a compile error otherwise),
///     kept exact whatever source changes rank, by a recomputation on the server (one
///     `aggregate` with `$topN` for the parents concerned, one `update` per parent, in a
///     transaction when the deployment has them).
///
///   `cascade = "background"` (not with `latest`): an update of the source records an intent
///   in `odm_cascades` in its own transaction instead of writing the copies, and a
///   [`CascadeWorker`](denormalize::CascadeWorker) the application runs writes them in
///   batches; see [`denormalize::CascadeWorker`] and [`Odm::cascade_status`].
///
///   The copies are checked at compile time: the source is a model, each copied field exists
///   on it and on the summary type with exactly the copy's type, a summary type derives
///   `Embed` and holds `id: Ref<Source>`, `via` references the right model; errors point at
///   the attribute's strings or at the copy's type, and name the broken rule of [`rules`]. A
///   copied field (or a `latest` copy's `via`) the source lacks is one error suggesting the
///   closest field of the source (`` `Part` has no field `nme` to copy: did you mean `name`? ``):
///   the derive of the copying model cannot see the source, so the compiler compares the name
///   with the list the source's derive records, in a `const` ([`rules::copied_field`]). The accessor of a copy through `via`, of a `latest` array and of
///   each field of a single summary (`Order::customer().name()`) is a [`Copied`] path: it can
///   be queried, not written (the ODM writes it).
/// - <a id="frequently-updated"></a>`#[frequently_updated]`: the field changes often (a part's
///   quantity on hand), so copying it would turn every update into an update of every copy.
///   A `#[denormalize]` that copies it compiles with a warning (the `deprecated` lint, on the
///   hidden constant `Part::qty_is_frequently_updated` that the derive adds for the field) at
///   its `fields` string, which suggests referencing the model and populating it instead;
///   `#[allow(deprecated)]` on the copying struct or field accepts the cost. Not on `_id` or a
///   field serde skips.
///
/// - <a id="version"></a>`#[odm(version)]` on an integer field (`u64`, `i64`, `u32`, `i32`):
///   optimistic concurrency. Inserts store 0, every update increments it, and
///   [`Odm::replace_one`] and [`Odm::update_document`] write a loaded document only over the
///   version it was loaded at ([`Error::VersionConflict`] otherwise, nothing written). See
///   [`versioning`].
/// - <a id="timestamps"></a>`#[odm(created_at)]`, `#[odm(updated_at)]` on a `bson::DateTime`
///   (or `Option` of one) field: set by every write of the ODM (the client's clock). See
///   [`versioning`].
///
/// serde's `rename` and `rename_all` are applied to every generated path.
///
/// # Kinds
///
/// Several kinds of document in one collection (single-collection inheritance): the base is an
/// enum deriving `Model`, in serde's internally tagged representation, whose variants each
/// hold one kind, `#[odm(collection = "books", common = "title, pages")] #[serde(tag = "type",
/// rename_all = "snake_case")] enum Book { Single(SingleBook), Series(SeriesBook) }`; each kind
/// is a struct deriving `Model` with `#[odm(kind_of = "Book")]` and no collection of its own.
/// A kind's operations send the same commands as any model's, with `{type: "series"}`
/// first in every filter (a raw filter naming `type` is combined with `$and`, so that it
/// cannot widen the kind); its inserts and replacements store `type: "series"`; its indexes
/// are partial on `{type: "series"}` and named `<keys>_type_series` (`sparse` becomes
/// `{field: {$exists: true}}` in the partial filter; `unique` is unique among the kind). The
/// enum reads and writes every kind, and `common` gives it a path for each field that every
/// kind stores with one type (`Book::title()`), which filters without the discriminator. A
/// document whose discriminator names no kind is [`Error::UnknownKind`], unless a unit variant
/// is marked `#[serde(other)]`. Compile errors: a kind that no variant holds, kinds with
/// different `_id` types, a common field missing from a kind or of another type in it, a field
/// of one kind through the enum (`Book::series_title()`), a kind storing the discriminator's
/// field, a discriminator value used twice, an index declared on the enum.
pub use odm_derive::Model;

/// Derives [`Embed`] for a struct stored inside other documents.
///
/// ```
/// use odm::prelude::*;
///
/// #[derive(Embed, Serialize, Deserialize, Debug)]
/// struct Publisher {
///     name: String,
///     #[serde(rename = "town")]
///     city: String,
/// }
///
/// #[derive(Model, Serialize, Deserialize, Debug)]
/// #[odm(collection = "books")]
/// struct Book {
///     #[serde(rename = "_id")]
///     id: i32,
///     #[embed]
///     publisher: Publisher,
/// }
///
/// // Paths reach into the embedded document, with serde's names.
/// assert_eq!(Book::publisher().city().path(), "publisher.town");
/// ```
///
/// Field attributes: `#[embed]` (with `max = N` on a `Vec`) on fields that are themselves
/// embedded types. serde's `rename` and `rename_all` are applied to every generated path. A
/// type with a field `id: Ref<T>` can hold summaries of `T` (`#[denormalize]` on the model that
/// embeds it). References, copies, indexes and `#[frequently_updated]` belong on models and
/// are refused here.
pub use odm_derive::Embed;

/// Derives [`PolyRef`] (and serde's `Serialize` and `Deserialize`, as DBRefs) for an enum of
/// references to several models: `enum Subject { Book(Ref<Book>), Author(Ref<Author>) }`.
///
/// Each variant holds a `Ref` to one model, stored in a collection of its own (two targets in
/// one collection are a compile error: for several kinds of one collection, reference their
/// base). A value is stored as the DBRef `{$ref: "books", $id: 1}`, fields in that order;
/// reading accepts any order and ignores fields other than `$ref`, `$id` and `$db`. Do not
/// derive serde's `Serialize` or `Deserialize` as well.
///
/// One variant may hold a [`DbRef`], the catch-all: it takes DBRefs to any collection no
/// variant targets, and DBRefs naming a database (`$db`), as read, and is never populated.
/// Without it, a DBRef to another collection is [`Error::UnknownReference`] and one naming a
/// database is [`Error::Decode`], when the document holding it is decoded (by a query or a
/// populate).
///
/// Hold the enum in a model field marked `#[reference(poly)]` (also on an `Option` of it, and
/// `#[reference(poly, many, max = N)]` on a `Vec`): see [`Model`](macro@Model). Populating
/// that field sends one `find {_id: {$in: ids}}` per target collection that the documents
/// reference, concurrently with the other paths of the same level.
pub use odm_derive::PolyRef;

pub use bson;
pub use mongodb;
pub use serde;

/// The driver's option types that odm's builders take, under the driver's names
/// ([`Find::collation`](crate::ops::Find::collation), [`Find::hint`](crate::ops::Find::hint),
/// [`Find::read_preference`](crate::ops::Find::read_preference), ...).
pub mod options {
    pub use mongodb::options::{
        Acknowledgment, Collation, CollationAlternate, CollationCaseFirst, CollationMaxVariable,
        CollationStrength, Hint, ReadConcern, ReadConcernLevel, ReadPreference,
        ReadPreferenceOptions, SelectionCriteria, TagSet, WriteConcern,
    };
}

// ANCHOR: prelude
/// The names most programs need: `use odm::prelude::*;`.
pub mod prelude {
    pub use crate::populate::Dangling;
    pub use crate::{
        DbRef, Embed, Field, Filter, Model, Odm, PolyRef, Projection, Ref, Sort, Update,
    };
    pub use bson::oid::ObjectId;
    pub use serde::{Deserialize, Serialize};
}
// ANCHOR_END: prelude

/// Used by the generated code; not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bucket::{count_type, id_type, item_field, item_path, time_path};
    pub use crate::bucket::{Bucket, BucketPeriod, BucketSpec, Every};
    pub use crate::catalog::Stamps;
    pub use crate::catalog::{sub_path, CopyInfo, CopyKind};
    pub use crate::catalog::{unregistered_entry, ModelEntry};
    pub use crate::catalog::{Acknowledged, Defaults, ReadMode};
    pub use crate::catalog::{IndexKey, IndexSpec};
    pub use crate::catalog::{OnDelete, RefKind, ReferenceInfo};
    pub use crate::catalog::{Segment, ShardKey, ShardOrder, TimeSeriesEntry};
    pub use crate::counters::{Counted, CounterPaths, Granularity};
    pub use crate::engine::Loading;
    pub use crate::geo::GeoIndexed;
    pub use crate::kind::{Kind, Kinds};
    pub use crate::migrations::SchemaVersion;
    pub use crate::model::{Embed, Model};
    pub use crate::path::Kept;
    pub use crate::path::ShardKeyed;
    pub use crate::path::Stamped;
    pub use crate::path::{Copied, Each, Field, Single};
    pub use crate::populate::{Inverse, RefContainer, RefPath, RefSlots};
    pub use crate::populate::{PolyContainer, PolyPart, PolyPath, PolySlots, PolyTargets};
    pub use crate::query::TextIndexed;
    pub use crate::reference::dbref::{dbref_of, serialize_ref, typed, unknown_collection, Stored};
    pub use crate::reference::dbref::{
        dbref_of_target, poly_deserialize, read_target, serialize_target, target_collection,
        typed_target, PolyDecode, TargetOf,
    };
    pub use crate::reference::{DbRef, PolyHas, PolyRef, Ref};
    pub use crate::rules::*;
    pub use crate::soft_delete::{DeletedAt, SoftDeleting};
    pub use crate::validator::{kinds_schema, BsonSchema, Validated};
    pub use crate::validator::{FieldSchema, RefIdOf, Schema, SchemaOf, UnknownSchema};
    pub use crate::versioning::{StampDate, VersionNumber};
    pub use core::module_path;
    pub use core::primitive::{str, u8};

    /// The list of a model's declarations (its indexes, references, copies): one generic
    /// call in the generated code where `vec!` would be three.
    pub fn vec_of<T, const N: usize>(items: [T; N]) -> Vec<T> {
        Vec::from(items)
    }

    /// The `partialFilterExpression` of an index's `partial(field = value, ...)`, from the
    /// filter the model's accessors built (its values are literals: none is refused).
    pub fn partial_filter<T: crate::Model>(filter: crate::Filter<T>) -> bson::Document {
        filter.into_document(T::COLLECTION).unwrap_or_default()
    }

    /// The entry of a model that declares none of a kind of item (copies, references).
    pub fn empty_vec<T>() -> Vec<T> {
        Vec::new()
    }

    /// Adds the shard key's index to a model's indexes, unless one of them has its name or
    /// the key is `{_id: 1}` (the `_id` index serves it).
    pub fn with_shard_index(mut specs: Vec<IndexSpec>, key: ShardKey) -> Vec<IndexSpec> {
        if key.fields == [("_id", ShardOrder::Ranged)] {
            return specs;
        }
        let mut keys = key.fields.iter().map(|(f, o)| {
            (
                *f,
                match o {
                    ShardOrder::Ranged => IndexKey::Asc,
                    ShardOrder::Hashed => IndexKey::Hashed,
                },
            )
        });
        if let Some((first, order)) = keys.next() {
            let spec = keys.fold(IndexSpec::on(first, order), |s, (f, o)| s.then(f, o));
            if !specs.iter().any(|s| s.name() == spec.name()) {
                specs.push(spec);
            }
        }
        specs
    }
    pub use crate::tree::{DeleteRule, TreeInfo, TreeModel};

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
    ) -> crate::catalog::ValueCheck {
        crate::catalog::ValueCheck::new(|v| {
            bson::deserialize_from_bson::<T>(v.clone())
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }

    /// The `(source path, copy path)` pairs of a copy, and their checks.
    #[allow(clippy::type_complexity)]
    pub fn copy_fields(
        all: Vec<(String, String, crate::catalog::ValueCheck)>,
    ) -> (Vec<(String, String)>, Vec<crate::catalog::ValueCheck>) {
        all.into_iter().map(|(from, to, c)| ((from, to), c)).unzip()
    }

    /// Reaches the copy's side of a copied field from the source's: `from.__odm_copy_in(copy)`
    /// is `copy`, and is not checked at all when `from` is not a model (already reported), so
    /// that it is one error.
    pub trait CopyIn {
        fn __odm_copy_in<B>(&self, copy: B) -> B {
            copy
        }
    }
    impl<A> CopyIn for A {}

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
