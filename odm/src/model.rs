//! The traits that `#[derive(Model)]` and `#[derive(Embed)]` implement.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::index::IndexSpec;
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

    /// The document's id; `None` only for an `Option` id that has not been set yet.
    fn document_id(&self) -> Option<&Self::Id>;

    /// The path of `_id`, for filters: `Book::id_field().eq(7)`.
    fn id_field() -> Field<Self, Self::Id> {
        Field::top("_id")
    }

    /// The indexes declared on the model, with every path resolved to its stored name.
    fn indexes() -> Vec<IndexSpec>;

    /// A fresh id when the id type can be generated client-side (`ObjectId`).
    #[doc(hidden)]
    fn generate_id() -> Option<Self::Id>;

    /// The reference fields of the model (`#[reference]`, `#[parent]`), for delete rules and
    /// two-way references.
    fn references() -> Vec<crate::relations::ReferenceInfo> {
        Vec::new()
    }

    /// The `#[denormalize]` fields of the model.
    fn copies() -> Vec<crate::denormalize::CopyInfo> {
        Vec::new()
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

    /// Paths below `field`; used by the generated accessors.
    #[doc(hidden)]
    fn paths<Root, W, M, S>(field: Field<Root, W, M>) -> Self::Paths<Root, W, M, S>;
}

/// What the registry knows of each model linked into the program.
#[doc(hidden)]
#[derive(Debug)]
pub struct ModelEntry {
    pub type_name: &'static str,
    pub collection: &'static str,
    pub indexes: fn() -> Vec<IndexSpec>,
    pub references: fn() -> Vec<crate::relations::ReferenceInfo>,
    pub copies: fn() -> Vec<crate::denormalize::CopyInfo>,
}

inventory::collect!(ModelEntry);

/// Every model linked into the program, without a registration step: the derive registers
/// each one. Sorted by collection, then type name.
pub fn registered_models() -> Vec<&'static ModelEntry> {
    let mut all: Vec<_> = inventory::iter::<ModelEntry>.into_iter().collect();
    all.sort_by_key(|e| (e.collection, e.type_name));
    all
}
