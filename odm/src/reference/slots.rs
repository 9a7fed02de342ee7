//! Where a document keeps its references: what the generated accessors hand to the populate
//! engine (see [`crate::populate`]), one field at a time.

use super::{Ref, RefTarget};

/// Where a document keeps its references of one field; what the generated accessors hand to
/// the populate engine.
#[derive(Debug)]
pub enum RefSlots<'a, T: RefTarget> {
    /// `Ref<T>`
    One(&'a mut Ref<T>),
    /// `Option<Ref<T>>`
    Optional(&'a mut Option<Ref<T>>),
    /// `Vec<Ref<T>>`
    Many(&'a mut Vec<Ref<T>>),
    /// The reference to `T`, if it is one, of a document's polymorphic reference.
    Maybe(Option<&'a mut Ref<T>>),
    /// The references to `T` among a document's polymorphic references.
    Each(Vec<&'a mut Ref<T>>),
}

/// Field types that hold references to `T`.
pub trait RefContainer<T: RefTarget> {
    /// Whether the field holds many references (an array).
    const MANY: bool = false;
    /// The references, for the populate engine.
    fn slots(&mut self) -> RefSlots<'_, T>;
}

impl<T: RefTarget> RefContainer<T> for Ref<T> {
    fn slots(&mut self) -> RefSlots<'_, T> {
        RefSlots::One(self)
    }
}

impl<T: RefTarget> RefContainer<T> for Option<Ref<T>> {
    fn slots(&mut self) -> RefSlots<'_, T> {
        RefSlots::Optional(self)
    }
}

impl<T: RefTarget> RefContainer<T> for Vec<Ref<T>> {
    const MANY: bool = true;
    fn slots(&mut self) -> RefSlots<'_, T> {
        RefSlots::Many(self)
    }
}
