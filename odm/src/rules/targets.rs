//! Which types a reference may target.
//!
//! `Ref<T>` accepts any [`RefTarget`](super::RefTarget): every model, and also embedded types and
//! plain values, so that a mistaken `Ref` is a type like any other and the one error is the
//! derive's check that the target is a [`ReferenceTarget`], at the field, instead of one per
//! use of an ill-formed `Ref`.

/// A model a reference can target; implemented by `#[derive(Model)]`. A `Ref` to an embedded
/// type or a plain value is reported at the field with this message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be referenced: a reference targets a model",
    label = "not a struct that derives `Model`",
    note = "a reference (`#[reference]`, `#[parent]`, `Ref<T>`) holds the `_id` of a document of another collection, so its target derives `odm::Model`; a type that derives `Embed` is stored inside the document (`#[embed]`), and a plain value is stored as itself, without `Ref`"
)]
pub trait ReferenceTarget {
    /// The collection of the target.
    const COLLECTION: &'static str;

    /// The model's name, for messages.
    const NAME: &'static str;

    /// The names of its stored fields, which an `inverse` is checked against
    /// ([`inverse_field`](super::inverse_field)).
    const FIELDS: &'static [&'static str];
}
