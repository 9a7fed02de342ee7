//! Compile-time rules of the derives, as traits.
//!
//! The code that `#[derive(Model)]` and `#[derive(Embed)]` generate requires these traits
//! where a rule spans more than one type (a copy and its source, a reference and its target,
//! a field and the type it holds), which a derive, seeing one struct, cannot check alone. When
//! one is not implemented, the compiler's message states the rule and the fix; the trait's
//! name is the rule's name. They are implemented by the derives or here, never by hand.

mod kinds;
pub(crate) mod names;
mod poly;
mod subset;
mod targets;
mod trees;

pub use poly::distinct_targets;
pub use subset::{same_subset_id, OneSubsetPairPerModel, SameSubsetId, Subset};

pub use kinds::{
    common_field, kind_field_free, kind_id, kind_slots, merge_bounds, name_hash, same_kind_id,
    KindBase, KindField, KindOf, SameKindField, SameKindId,
};

pub use crate::reference::{NotAModel, RefTarget};
pub use targets::ReferenceTarget;
pub use trees::{copyable, tree_id, tree_ref, Copyable, SameTree, TreeId};

use std::marker::PhantomData;

use crate::model::{Embed, Model};
use crate::path::Field;
use crate::reference::Ref;

/// A field that holds a type deriving [`Embed`] is declared `#[embed]`, which
/// gives it typed paths below it (`Book::publisher().name()`). Implemented by no type: a
/// field of an `Embed` type without `#[embed]` is reported at its type, with this message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` derives `Embed`, so the field that holds it needs `#[embed]`",
    label = "add `#[embed]` to this field",
    note = "`#[embed]` gives the field typed paths below it (`Book::publisher().name()`); an array of embedded documents also declares its bound: `#[embed(max = N)]`"
)]
pub trait EmbeddedWithoutAttribute {}

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
    /// returns. A copy calls the method of each field it copies, with a stand-in in scope for
    /// a name the source lacks (which [`copied_field`] reports, so that the method call never
    /// adds an error naming this type). A copy of a `#[frequently_updated]` field `qty` also
    /// names the deprecated constant `Source::qty_is_frequently_updated`: a warning at the
    /// copy.
    type Fields: SourceAccessors<Model = Self>;

    /// The model's name, for messages.
    const NAME: &'static str;

    /// The names of its stored fields (Rust names, as `fields = "..."` lists them), against
    /// which [`copied_field`] checks a copy.
    const FIELDS: &'static [&'static str];

    /// The accessors of the model's copyable fields, on which a copy calls the method of each
    /// field it copies.
    fn fields() -> Self::Fields;
}

/// The type of [`CopySource::Fields`], and the model it belongs to.
pub trait SourceAccessors {
    /// The source model whose fields these accessors name.
    type Model;
}

/// The collection of the source model.
pub fn source_collection<F: SourceAccessors>(_source: &F) -> &'static str
where
    F::Model: Model,
{
    <F::Model as Model>::COLLECTION
}

/// The discriminator of the copy's source when it is a kind of a polymorphic model: the copy
/// is then taken from documents of that kind only.
pub fn source_kind<F: SourceAccessors>(_source: &F) -> Option<crate::kind::Kind>
where
    F::Model: Model,
{
    <F::Model as Model>::entry().kind
}

/// A copy holds the same type as its source field.
#[diagnostic::on_unimplemented(
    message = "the copy holds `{Self}`, but the source field holds `{T}`",
    label = "a denormalized copy must have exactly the type of the field it copies",
    note = "change the copy's type to `{T}`, or copy another field"
)]
pub trait SameType<T> {}
impl<T> SameType<T> for T {}

/// What a copy is compared with: with `Checked<true>` (the copied field exists on the source
/// and, for a summary, on the summary type) the source field; with `Checked<false>` the copy
/// itself, since the missing field is reported by [`copied_field`] and a type mismatch with a
/// stand-in would only repeat it.
#[derive(Debug)]
pub struct Checked<const BOTH_FIELDS_EXIST: bool>;

/// See [`Checked`].
pub trait Compared<S, C> {
    /// The type the copy is compared with: the source field's, or the copy's own.
    type Source;

    /// The value the copy's type is compared with: `source` or `copy`, as [`Checked`] says.
    fn source(source: S, copy: C) -> Self::Source;
}
impl<S, C> Compared<S, C> for Checked<true> {
    type Source = S;

    fn source(source: S, _copy: C) -> S {
        source
    }
}
impl<S, C> Compared<S, C> for Checked<false> {
    type Source = C;

    fn source(_source: S, copy: C) -> C {
        copy
    }
}

/// Compiles when the copy has exactly the source field's type; the stored paths of the
/// source field and of the copy.
pub fn copy_of<R1, T1, M1, R2, T2: SameType<T1>, M2>(
    source: &Field<R1, T1, M1>,
    copy: &Field<R2, T2, M2>,
) -> (String, String) {
    (source.path().to_owned(), copy.path().to_owned())
}

/// Whether `fields` (a [`CopySource::FIELDS`] or [`SummaryType::FIELDS`]) has `name`.
pub const fn has_field(fields: &[&str], name: &str) -> bool {
    names::contains(fields, name)
}

/// A copied field exists on its source and, for a summary, on the summary type: evaluated
/// while compiling (`summary` is `""` for a copy `via` a reference). When it does not, the
/// compile error names both types and suggests the closest field of the source, which the
/// derive of the copying model, seeing one struct, cannot know.
pub const fn copied_field(
    source: &str,
    source_fields: &[&str],
    summary: &str,
    summary_fields: &[&str],
    name: &str,
) {
    if !names::contains(source_fields, name) {
        let message = names::Message::new()
            .push("`")
            .push(source)
            .push("` has no field `")
            .push(name)
            .push("` to copy: ")
            .push_hint(source_fields, name);
        panic!("{}", message.as_str());
    }
    if !summary.is_empty() && !names::contains(summary_fields, name) {
        let message = names::Message::new()
            .push("`")
            .push(summary)
            .push("` has no field `")
            .push(name)
            .push("` to hold the copy of `")
            .push(source)
            .push("::")
            .push(name)
            .push("`: add `")
            .push(name)
            .push("` to `")
            .push(summary)
            .push("`, with the type of `")
            .push(source)
            .push("::")
            .push(name)
            .push("`");
        panic!("{}", message.as_str());
    }
}

/// The `via` of the last N sources (`latest`) names a field of the source (its `#[parent]`
/// reference to the copying model): evaluated while compiling, with the closest field as a
/// suggestion.
pub const fn via_field(source: &str, fields: &[&str], name: &str) {
    if !names::contains(fields, name) {
        let message = names::Message::new()
            .push("`")
            .push(source)
            .push("` has no field `")
            .push(name)
            .push("` for `via` to follow (its reference to this model): ")
            .push_hint(fields, name);
        panic!("{}", message.as_str());
    }
}

/// The `inverse` of a reference names a field of the referenced model: evaluated while
/// compiling, with the closest field as a suggestion.
pub const fn inverse_field(target: &str, fields: &[&str], name: &str) {
    if !names::contains(fields, name) {
        let message = names::Message::new()
            .push("`")
            .push(target)
            .push("` has no field `")
            .push(name)
            .push("` for `inverse` to name (its reference back): ")
            .push_hint(fields, name);
        panic!("{}", message.as_str());
    }
}

/// A dotted index key (`publisher.name`) names a field of the embedded type: evaluated while
/// compiling, with the closest field as a suggestion.
pub const fn key_field(embedded: &str, fields: &[&str], name: &str, key: &str) {
    if let Some(message) = no_such_field(embedded, fields, name, "index key", key) {
        panic!("{}", message.as_str());
    }
}

/// What to say when the embedded type `embedded` lacks the field `name`, which the `what` `key`
/// names ("`Source` has no field `hots`, named by the shard key `source.hots`: did you mean
/// `host`?"); `None` when it has it. The caller panics, so that the compiler's message points
/// at the caller's check alone.
const fn no_such_field(
    embedded: &str,
    fields: &[&str],
    name: &str,
    what: &str,
    key: &str,
) -> Option<names::Message> {
    if names::contains(fields, name) {
        return None;
    }
    Some(
        names::Message::new()
            .push("`")
            .push(embedded)
            .push("` has no field `")
            .push(name)
            .push("`, named by the ")
            .push(what)
            .push(" `")
            .push(key)
            .push("`: ")
            .push_hint(fields, name),
    )
}

/// Checks the field `name` of the embedded type that a dotted shard key (`meta.host`) names:
/// the embedded type has it. Used by the generated checks.
pub const fn shard_key_field(embedded: &str, fields: &[&str], name: &str, key: &str) {
    if let Some(message) = no_such_field(embedded, fields, name, "shard key", key) {
        panic!("{}", message.as_str());
    }
}

/// The stored name of the embedded type's field `name` (`stored` in the order of `fields`,
/// as [`Embed::STORED`]); `name` itself when the type has no such field
/// ([`shard_key_field`] reports that).
pub const fn stored_name(
    fields: &[&'static str],
    stored: &[&'static str],
    name: &'static str,
) -> &'static str {
    let mut i = 0;
    while i < fields.len() {
        if names::same(fields[i], name) {
            return if i < stored.len() { stored[i] } else { name };
        }
        i += 1;
    }
    name
}

/// `outer.inner` as the bytes of a path of `N` bytes (`N` = both lengths plus one), from
/// which a generated constant makes the `&'static str` of a key inside an embedded document.
pub const fn dotted_path<const N: usize>(outer: &str, inner: &str) -> [u8; N] {
    let (outer, inner) = (outer.as_bytes(), inner.as_bytes());
    assert!(outer.len() + 1 + inner.len() == N, "a path's length");
    let mut out = [b'.'; N];
    let mut i = 0;
    while i < outer.len() {
        out[i] = outer[i];
        i += 1;
    }
    let mut j = 0;
    while j < inner.len() {
        out[outer.len() + 1 + j] = inner[j];
        j += 1;
    }
    out
}

/// The `&str` of a path built by [`dotted_path`] (field names are UTF-8, so is their join).
pub const fn path_str(bytes: &[u8]) -> &str {
    match core::str::from_utf8(bytes) {
        Ok(path) => path,
        Err(_) => panic!("a field name is UTF-8"),
    }
}

/// The typed paths into the embedded type `E` (implemented by `#[derive(Embed)]`), so
/// that a summary is checked through the copy's accessor.
pub trait PathsOf<E> {}

/// The type of a summary (`#[denormalize(from = "...", fields = "...")] parts: Vec<PartSummary>`)
/// or of the last N sources (`latest`): a struct deriving [`Embed`], which the ODM fills with
/// the copied fields and whose typed paths the copy's accessor returns. Implemented by
/// `#[derive(Embed)]` (not through `Embed`, so that the message is this rule's).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold copies: a summary type derives `Embed`",
    label = "the type of a summary must derive `Embed`",
    note = "add `#[derive(odm::Embed)]` to `{Self}`: the ODM fills it with the copied fields (and `id: Ref<Source>`), and its typed paths are reached through the copy (`Product::parts().name()`)"
)]
pub trait SummaryType {
    /// The typed paths into the summary ([`Embed::Paths`]).
    type Paths<Root, W, M, S>;

    /// The type's name, for messages.
    const NAME: &'static str;

    /// The names of its stored fields, which [`copied_field`] checks the copied ones against.
    const FIELDS: &'static [&'static str];

    /// The typed paths into the summaries held by `field`.
    fn paths<Root, W, M, S>(field: Field<Root, W, M>) -> Self::Paths<Root, W, M, S>;
}

/// A summary of the model `S`: an embedded type whose field `id` holds a `Ref<S>`
/// (implemented by `#[derive(Embed)]` for a type with an `id` field). `ID` is the stored
/// name of that field, by which the copies of a source are found.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold summaries of `{S}`: it has no `id` field",
    label = "a summary of `{S}` holds its id as `id: Ref<{S}>`",
    note = "add `id: Ref<{S}>` to `{Self}`: the ODM finds the copies of a `{S}` by it"
)]
pub trait SummaryOf<S> {
    /// The stored name of the summary's `id` field.
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
pub fn summary_id<F: SourceAccessors, P: PathsOf<E>, E: SummaryOf<F::Model>>(
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
pub fn via_to_source<F: SourceAccessors, R, W: ViaRef<F::Model>, M>(
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

/// Finds, at compile time, a field whose type derives `Embed` but that lacks `#[embed]`:
/// `(&EmbedProbe::<T>::NEW).probe()` resolves to [`EmbedNeedsAttributeProbe::probe`]
/// (whose bound fails) when `T: Embed`, and to [`NotEmbedProbe::probe`] otherwise.
#[derive(Debug)]
pub struct EmbedProbe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> EmbedProbe<T> {
    /// The probe of `T`, on whose reference `probe()` is called.
    pub const NEW: Self = EmbedProbe(PhantomData);
}

/// The method `EmbedProbe` resolves to for an `Embed` type: its bound fails.
pub trait EmbedNeedsAttributeProbe<T: ?Sized> {
    /// Fails to compile, at the field, since `T` derives `Embed` and the field lacks
    /// `#[embed]`.
    fn probe(&self)
    where
        T: EmbeddedWithoutAttribute,
    {
    }
}
impl<T: Embed> EmbedNeedsAttributeProbe<T> for EmbedProbe<T> {}

/// The method `EmbedProbe` resolves to for any other type: nothing to report.
pub trait NotEmbedProbe {
    /// Does nothing: the type does not derive `Embed`.
    fn probe(&self) {}
}
impl<T: ?Sized> NotEmbedProbe for &EmbedProbe<T> {}
