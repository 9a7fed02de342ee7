//! The traits that `#[derive(Model)]` and `#[derive(Embed)]` implement.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::catalog::{CopyInfo, IndexSpec, ReferenceInfo};
use crate::path::Field;

/// A struct stored as the documents of one collection.
///
/// Derive it with `#[derive(Model)]`; see the derive's documentation for the attributes.
/// Implementing it by hand is possible but loses the compile-time checks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an odm model",
    label = "this type has no `#[derive(Model)]`",
    note = "add `#[derive(odm::Model)]` and `#[odm(collection = \"...\")]` to the struct"
)]
pub trait Model: Serialize + DeserializeOwned + Send + Sync + Unpin + 'static {
    /// Type of the `_id` field (for an `Option<X>` field, `X`).
    type Id: Serialize + DeserializeOwned + Clone + Debug + Send + Sync + 'static;

    /// Name of the collection the documents live in.
    const COLLECTION: &'static str;

    /// The fields the ODM keeps on every write (`#[odm(version)]`, `#[odm(created_at)]`,
    /// `#[odm(updated_at)]`), by stored name; see the `versioning` module. A constant of the
    /// trait, like [`Model::SCHEMA_VERSION`], because an enum of kinds computes its own from
    /// its kinds' (and a kind takes its enum's schema version) while compiling; both are also
    /// in the model's [entry](Model::entry), with everything else the derive describes.
    #[doc(hidden)]
    const STAMPS: crate::catalog::Stamps = crate::catalog::Stamps::NONE;
    /// The model's defaults for its operations (`#[odm(read_preference = ...,
    /// write_concern = ...)]`; a kind's are its enum of kinds'), also in its entry.
    #[doc(hidden)]
    const DEFAULTS: crate::catalog::Defaults = crate::catalog::Defaults::NONE;
    /// For a model with `#[odm(schema_version = N)]`: the version its documents are written
    /// with (`_v`), and the upgrade of older ones on read.
    const SCHEMA_VERSION: Option<crate::catalog::SchemaVersion> = None;

    /// Whether every key a document of the model is written with is known while compiling:
    /// its fields' names and its embedded types' (no map, no free-form document, no field
    /// serde writes with a function of the application). Its writes then skip the run-time
    /// check of their keys. The derive's works it out once per process; `false` (checked)
    /// otherwise.
    #[doc(hidden)]
    fn plain_keys() -> bool {
        false
    }

    /// The document's id; `None` only for an `Option` id that has not been set yet.
    fn document_id(&self) -> Option<&Self::Id>;

    /// The version the document was loaded at (its `#[odm(version)]` field); `None` for a
    /// model without one.
    #[doc(hidden)]
    fn document_version(&self) -> Option<i64> {
        None
    }

    /// The fields this document keeps: the model's ([`Model::STAMPS`]), or for an enum of
    /// kinds, its kind's.
    #[doc(hidden)]
    fn stamps(&self) -> crate::catalog::Stamps {
        Self::STAMPS
    }

    /// The path of `_id`, for filters: `Book::id_field().eq(7)`.
    fn id_field() -> Field<Self, Self::Id> {
        Field::top("_id")
    }

    /// The indexes declared on the model, with every path resolved to its stored name (for an
    /// enum of kinds, its own then its kinds'): what its [catalog entry](Self::entry) lists.
    fn indexes() -> Vec<IndexSpec> {
        (Self::entry().indexes)()
    }

    /// The model's description, as the derive registers it (see [`crate::Catalog`]).
    #[doc(hidden)]
    fn entry() -> &'static crate::catalog::ModelEntry;

    /// A fresh id when the id type can be generated client-side (`ObjectId`).
    #[doc(hidden)]
    fn generate_id() -> Option<Self::Id>;

    /// The reference fields of the model (`#[reference]`, `#[parent]`), for delete rules and
    /// two-way references: what its catalog entry lists.
    fn references() -> Vec<ReferenceInfo> {
        (Self::entry().references)()
    }

    /// The `#[denormalize]` fields of the model: what its catalog entry lists.
    fn copies() -> Vec<CopyInfo> {
        (Self::entry().copies)()
    }

    /// The first bounded array holding more elements than its bound:
    /// `(path, length, bound)`. Checked before every insert and replace.
    #[doc(hidden)]
    fn bound_violation(&self) -> Option<(&'static str, usize, u32)> {
        None
    }
}

/// A struct stored inside other documents (one-to-one, one-to-few).
///
/// Derive it with `#[derive(Embed)]` and mark the embedding field `#[embed]`. A type that is
/// accessed on its own is a [`Model`] and is referenced, not embedded: a type cannot be both.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be embedded: it does not derive `Embed`",
    label = "`#[embed]` needs a type that derives `Embed`",
    note = "`#[embed]` is for a struct (or an `Option`/`Vec` of one) that derives `odm::Embed`; a type that is accessed on its own (a `Model`) is referenced, not embedded (rule of thumb 2)"
)]
pub trait Embed: Serialize + DeserializeOwned {
    /// The typed paths into this type, reached from the model `Root` through a field of type
    /// `W` (the type itself, an `Option` or a `Vec` of it). `M` is the marker of the field
    /// itself and `S` the marker of the paths below it.
    type Paths<Root, W, M, S>;

    /// The type's name, for messages; used by the generated checks.
    #[doc(hidden)]
    const NAME: &'static str;

    /// The names of its stored fields (which a dotted index key is checked against); used by
    /// the generated checks.
    #[doc(hidden)]
    const FIELDS: &'static [&'static str];

    /// The names under which [`FIELDS`](Embed::FIELDS) are stored, in the same order, when
    /// serde renames any of them (a shard key into the type is stored under these names).
    #[doc(hidden)]
    const STORED: &'static [&'static str] = Self::FIELDS;

    /// Whether every key a value of the type is written with is known while compiling (see
    /// [`Model::plain_keys`]); `visiting` holds the types being looked at, which a type met
    /// again inside itself answers `true` for. Used by the derive of the types that hold it.
    #[doc(hidden)]
    fn plain_keys(visiting: &mut Vec<&'static str>) -> bool {
        let _ = visiting;
        false
    }

    /// Paths below `field`; used by the generated accessors.
    #[doc(hidden)]
    fn paths<Root, W, M, S>(field: Field<Root, W, M>) -> Self::Paths<Root, W, M, S>;
}

/// Paths spelt by hand, checked against the model they belong to.
impl<Root: Model, T, M> Field<Root, T, M> {
    /// A field at an arbitrary dotted path (`publisher.name`, `parts.0.quantity`). The type
    /// parameters are not checked against the model: prefer the generated accessors.
    ///
    /// A path is data, never operators: a segment starting with `$` (`$where`, the positional
    /// `parts.$[p].name`), an empty segment (`a..b`, a leading or trailing dot) or one holding
    /// a NUL byte is refused with [`Error::InvalidPath`](crate::Error::InvalidPath), so a path
    /// taken from input cannot smuggle an operator into a filter, sort, projection or update.
    /// [`Filter::raw`](crate::Filter::raw) and
    /// [`Update::raw`](crate::Update::raw) are the only ways to send those. Nothing is
    /// sent by this call.
    pub fn at_path(path: impl Into<std::borrow::Cow<'static, str>>) -> crate::Result<Self> {
        let path = path.into();
        if let Some(segment) = path
            .split('.')
            .find(|s| s.is_empty() || s.starts_with('$') || s.contains('\0'))
        {
            return Err(crate::Error::InvalidPath {
                collection: Root::COLLECTION.to_owned(),
                path: path.clone().into_owned(),
                segment: segment.to_owned(),
            });
        }
        Ok(Field::trusted(path))
    }
}

/// An embedded type is an element of the arrays that hold it: its paths from an element.
impl<E: Embed> crate::positional::ArrayElement for E {
    type Paths<Root, M> = E::Paths<Root, E, M, M>;

    fn element_paths<Root, M>(field: Field<Root, Self, M>) -> Self::Paths<Root, M> {
        E::paths(field)
    }
}
