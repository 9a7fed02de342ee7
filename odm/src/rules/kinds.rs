//! The rules of single-collection inheritance: a kind and its base name each other, a kind
//! stores no field under the discriminator's name, and a common field is in every kind with
//! one type.

use super::names;
use crate::kind::Kind;

/// A struct declared `#[odm(kind_of = "Base")]` is held by a variant of `Base`, which gives it
/// its discriminator value. Implemented by the derive of the base enum, for each kind.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared a kind of `{Base}`, but no variant of `{Base}` holds it",
    label = "`kind_of` names an enum without a variant for this struct",
    note = "the base of kinds is an enum deriving `odm::Model` with `#[serde(tag = \"type\")]` and one variant per kind; add a variant holding `{Self}` to `{Base}`"
)]
pub trait KindOf<Base> {
    /// The kind's discriminator: the base's field, the variant's value.
    const KIND: Kind;
}

/// The base of a polymorphic model (an enum deriving `Model`), which `kind_of` names.
/// Implemented by the derive of the enum.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an enum of kinds, so nothing can be a kind of it",
    label = "`kind_of` names a type that is not an enum deriving `Model`",
    note = "the base of kinds is an enum deriving `odm::Model` with `#[serde(tag = \"type\")]`, one variant per kind: `enum Book {{ Single(SingleBook), Series(SeriesBook) }}`"
)]
pub trait KindBase {}

/// A field of a kind, by the hash of its name: what the base's common fields
/// (`#[odm(common = "title")]`) are reached through. Implemented by the derive of each kind,
/// for each of its stored fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no field with the name of this common field",
    label = "a common field must be in every kind"
)]
pub trait KindField<const NAME: u64> {
    /// The field's type.
    type Value;
    /// The model a reference field references; `NotAModel` for other fields.
    type Target: crate::reference::RefTarget;
    /// The typed path to the field from the model `R`.
    type Paths<R: 'static>;
    /// The typed path to the field from the model `R`, which finds the references of a
    /// reference field in an `R` with `slots`.
    fn paths<R: 'static>(
        slots: fn(&mut R) -> crate::reference::RefSlots<'_, Self::Target>,
    ) -> Self::Paths<R>;
    /// The references a reference field holds (none for other fields).
    fn slots(&mut self) -> crate::reference::RefSlots<'_, Self::Target>;
}

/// The same type for a common field in every kind: `T: SameKindField<U>` only when they are
/// equal. Reported at the common field's name with both types.
#[diagnostic::on_unimplemented(
    message = "a common field has the type `{Self}` in one kind and `{Other}` in another",
    label = "this field is stored by several kinds with incompatible types",
    note = "a common field is queried and indexed once for every kind, so every kind stores it with the same type"
)]
pub trait SameKindField<Other> {}
impl<T> SameKindField<T> for T {}

/// The references the common field `NAME` holds in the kind `K2`, as the first kind `K1`
/// types them: generated per kind for the base's accessor of the field, where it also checks
/// that `K2` has the field with the same type.
pub fn kind_slots<const NAME: u64, K1, K2>(
    kind: &mut K2,
) -> crate::reference::RefSlots<'_, <K1 as KindField<NAME>>::Target>
where
    K1: KindField<NAME>,
    K2: KindField<NAME, Target = <K1 as KindField<NAME>>::Target>,
    <K2 as KindField<NAME>>::Value: SameKindField<<K1 as KindField<NAME>>::Value>,
{
    kind.slots()
}

/// A kind stores no field under the discriminator's name: the discriminator is written by the
/// ODM. Evaluated while compiling.
pub const fn kind_field_free(kind: &str, stored: &[&str], discriminator: &str) {
    if names::contains(stored, discriminator) {
        let message = names::Message::new()
            .push("`")
            .push(kind)
            .push("` stores a field `")
            .push(discriminator)
            .push("`, the name of its base's discriminator: the ODM writes the kind there; rename the field or the discriminator (`#[serde(tag = \"...\")]` on the base)");
        panic!("{}", message.as_str());
    }
}

/// A common field (`#[odm(common = "...")]`) is a field of every kind. Evaluated while
/// compiling, with the closest field as a suggestion.
pub const fn common_field(kind: &str, fields: &[&str], name: &str) {
    if !names::contains(fields, name) {
        let message = names::Message::new()
            .push("`")
            .push(kind)
            .push("` has no field `")
            .push(name)
            .push("`, so it is not common to every kind: ")
            .push_hint(fields, name);
        panic!("{}", message.as_str());
    }
}

/// The name hash that [`KindField`] is keyed by (FNV-1a), the same in the derive.
pub const fn name_hash(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// The kinds of one model share the type of `_id`: `T: SameKindId<U>` only when they are equal.
#[diagnostic::on_unimplemented(
    message = "the kinds of one model share one id type, but one kind's `_id` is `{Self}` and another's `{Other}`",
    label = "this kind's `_id` has another type",
    note = "every kind is stored in the base's collection and referenced as the base: give every kind's `_id` the same type"
)]
pub trait SameKindId<Other> {}
impl<T> SameKindId<T> for T {}

/// Checks that the kind `K2` has the id type of `K1`; generated per kind.
pub fn same_kind_id<K1: crate::Model, K2: crate::Model>()
where
    K2::Id: SameKindId<K1::Id>,
{
}

/// The id of a kind as the base's id type: the same type, which [`same_kind_id`] checks (a
/// kind with another id type has no id as the base's).
pub fn kind_id<I: 'static, J: 'static>(id: Option<&J>) -> Option<&I> {
    id.and_then(|j| (j as &dyn std::any::Any).downcast_ref::<I>())
}

/// The bounded arrays of an enum of kinds: every kind's, the smallest bound where two kinds
/// bound an array of the same path (an update through the base may reach either kind).
pub fn merge_bounds(kinds: &[&'static [(&'static str, u32)]]) -> Vec<(&'static str, u32)> {
    let mut out: Vec<(&'static str, u32)> = Vec::new();
    for &(path, max) in kinds.iter().flat_map(|k| k.iter()) {
        match out.iter_mut().find(|(p, _)| *p == path) {
            Some((_, m)) => *m = (*m).min(max),
            None => out.push((path, max)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derive keys a kind's fields by the same hash (its own test checks the same value).
    #[test]
    fn names_hash_as_the_derive_hashes_them() {
        assert_eq!(name_hash("title"), 15_722_393_318_163_439_657);
    }

    #[test]
    fn the_smallest_bound_of_a_path_wins() {
        let a: &'static [(&'static str, u32)] = &[("reviews", 10), ("tags", 5)];
        let b: &'static [(&'static str, u32)] = &[("reviews", 3)];
        assert_eq!(merge_bounds(&[a, b]), [("reviews", 3), ("tags", 5)]);
    }
}
