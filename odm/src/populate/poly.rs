//! Populate of polymorphic references: one `$in` query per target collection (and level),
//! whatever the number of documents and however their references are mixed.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use super::{Dangling, IntoPopulate, Populate, RefSlots, Step};
use crate::engine::Loading;
use crate::model::Model;
use crate::path::{Field, Single};
use crate::query::Filter;
use crate::reference::{DbRef, PolyHas, PolyRef, Ref};

/// The populate side of a polymorphic reference; implemented by `#[derive(PolyRef)]`.
#[doc(hidden)]
pub trait PolyTargets: PolyRef {
    /// One populate per target, over the references `slots` finds in a `Root`.
    fn populates<Root: Model>(
        path: &str,
        slots: fn(&mut Root) -> PolySlots<'_, Self>,
    ) -> Vec<PolyPart<Root>>;
}

/// Where a document keeps its polymorphic references of one field.
#[derive(Debug)]
pub enum PolySlots<'a, E> {
    /// `E`
    One(&'a mut E),
    /// `Option<E>`
    Optional(&'a mut Option<E>),
    /// `Vec<E>`
    Many(&'a mut Vec<E>),
}

/// Field types that hold polymorphic references `E`.
pub trait PolyContainer<E> {
    /// Whether the field holds an array.
    const MANY: bool = false;
    /// The references, for the populate engine.
    fn slots(&mut self) -> PolySlots<'_, E>;
}

impl<E> PolyContainer<E> for E {
    fn slots(&mut self) -> PolySlots<'_, E> {
        PolySlots::One(self)
    }
}

impl<E> PolyContainer<E> for Option<E> {
    fn slots(&mut self) -> PolySlots<'_, E> {
        PolySlots::Optional(self)
    }
}

impl<E> PolyContainer<E> for Vec<E> {
    const MANY: bool = true;
    fn slots(&mut self) -> PolySlots<'_, E> {
        PolySlots::Many(self)
    }
}

/// The typed path of a polymorphic reference field (`FeedEntry::subject()`): what populate
/// takes, and what filters on the stored DBRefs are built from.
pub struct PolyPath<Root, W, E> {
    field: Field<Root, W, Single>,
    slots: fn(&mut Root) -> PolySlots<'_, E>,
    many: bool,
}

impl<Root, W: PolyContainer<E>, E> PolyPath<Root, W, E> {
    /// Used by the generated accessors. (No `PolyRef` bound: a field whose enum does not derive
    /// it is reported once, by the reference's registration.)
    #[doc(hidden)]
    pub fn new(field: Field<Root, W, Single>, slots: fn(&mut Root) -> PolySlots<'_, E>) -> Self {
        PolyPath {
            field,
            slots,
            many: W::MANY,
        }
    }
}

impl<Root: Model, W, E: PolyTargets> PolyPath<Root, W, E> {
    /// Documents whose reference is `target`: `{path.$ref: c, path.$id: id}`, or
    /// for an array, an element equal to the DBRef (`{path: {$eq: {$ref, $id}}}`).
    pub fn refers_to(&self, target: &E) -> Filter<Root> {
        Filter::from_parts(self.dbref_filter(&target.to_dbref()), None)
    }

    fn dbref_filter(&self, r: &DbRef) -> bson::Document {
        crate::reference::dbref::refers_to_filter(
            self.field.path(),
            self.many,
            &r.collection,
            r.id.clone(),
        )
    }

    /// Documents whose reference points to the collection of `T` (whatever the id).
    pub fn refers_to_kind<T: Model>(&self) -> Filter<Root>
    where
        E: PolyHas<T>,
    {
        let path = self.field.path();
        Filter::from_parts(
            crate::literal::eq(&format!("{path}.$ref"), T::COLLECTION.into()),
            None,
        )
    }

    /// A populate of this path with options per target: `.with::<Book>(|p| p.select(..))`.
    pub fn populate(&self) -> PolyPopulate<Root, E> {
        PolyPopulate {
            path: self.field.path().to_owned(),
            parts: E::populates::<Root>(self.field.path(), self.slots),
            _e: std::marker::PhantomData,
        }
    }
}

impl<Root, W, E> std::ops::Deref for PolyPath<Root, W, E> {
    type Target = Field<Root, W, Single>;
    fn deref(&self) -> &Self::Target {
        &self.field
    }
}

impl<Root, W, E: PolyTargets> fmt::Debug for PolyPath<Root, W, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PolyPath({} -> {})",
            self.field.path(),
            E::TARGETS.join(" | ")
        )
    }
}

/// The populate of one target of a polymorphic reference, type-erased.
#[doc(hidden)]
pub struct PolyPart<Root> {
    target: TypeId,
    part: Box<dyn Part<Root>>,
}

impl<Root> fmt::Debug for PolyPart<Root> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PolyPart")
    }
}

trait Part<Root>: Send + Sync {
    fn into_step(self: Box<Self>) -> Box<dyn Step<Root>>;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    fn set_dangling(&mut self, policy: Dangling);
}

impl<Root: Model, T: Model> Part<Root> for Populate<Root, T> {
    fn into_step(self: Box<Self>) -> Box<dyn Step<Root>> {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn set_dangling(&mut self, policy: Dangling) {
        self.dangling = policy;
    }
}

impl<Root: Model> PolyPart<Root> {
    /// Used by the generated code: the populate of the target `T`, whose references `pick`
    /// finds in the enum `E` held at `slots`.
    pub fn new<T: Model, E: Send + Sync + 'static>(
        path: &str,
        slots: fn(&mut Root) -> PolySlots<'_, E>,
        pick: fn(&mut E) -> Option<&mut Ref<T>>,
    ) -> Self {
        // One reference without allocating; the references to `T` of an array, collected.
        let each = slots_fn(move |root: &mut Root| match slots(root) {
            PolySlots::One(e) => RefSlots::Maybe(pick(e)),
            PolySlots::Optional(o) => RefSlots::Maybe(o.as_mut().and_then(pick)),
            PolySlots::Many(v) => RefSlots::Each(v.iter_mut().filter_map(pick).collect()),
        });
        PolyPart {
            target: TypeId::of::<T>(),
            part: Box::new(Populate {
                dbref: true,
                ..Populate::with_slots(path.to_owned(), Arc::new(each))
            }),
        }
    }
}

impl<Root: Model> PolyPart<Root> {
    /// Used by the generated code: [`PolyPart::new`] for the variant `I` of `E`.
    pub fn of_target<
        E: crate::reference::dbref::PolyTarget<I> + Send + Sync + 'static,
        const I: usize,
    >(
        path: &str,
        slots: fn(&mut Root) -> PolySlots<'_, E>,
        pick: fn(&mut E) -> Option<&mut Ref<crate::reference::dbref::TargetOf<E, I>>>,
    ) -> Self {
        PolyPart::new(path, slots, pick)
    }
}

/// Gives a closure the signature the populate engine calls (for every lifetime of the
/// document borrowed).
fn slots_fn<Root, T: Model, F>(f: F) -> F
where
    F: for<'a> Fn(&'a mut Root) -> RefSlots<'a, T>,
{
    f
}

/// A populate of a polymorphic reference with options, built by [`PolyPath::populate`]: one
/// `find` per target collection that the documents reference (`{_id: {$in: ids}}`, split
/// under the command limits), run concurrently with the other paths of the same level.
pub struct PolyPopulate<Root, E> {
    path: String,
    parts: Vec<PolyPart<Root>>,
    _e: std::marker::PhantomData<fn() -> E>,
}

impl<Root: Model, E: PolyTargets> PolyPopulate<Root, E> {
    /// Sets the options of the target `T`'s populate: `select`, `filter`, `then` (the next
    /// level, from `T`'s own references), `batch_size`, `dangling`.
    pub fn with<T: Model>(mut self, f: impl FnOnce(Populate<Root, T>) -> Populate<Root, T>) -> Self
    where
        E: PolyHas<T>,
    {
        if let Some(part) = self
            .parts
            .iter_mut()
            .find(|p| p.target == TypeId::of::<T>())
        {
            let placeholder: Box<dyn Part<Root>> = Box::new(Populate::<Root, T>::with_slots(
                String::new(),
                Arc::new(|_: &mut Root| RefSlots::Maybe(None)),
            ));
            let taken = std::mem::replace(&mut part.part, placeholder);
            if let Ok(p) = taken.into_any().downcast::<Populate<Root, T>>() {
                part.part = Box::new(f(*p));
            }
        }
        self
    }

    /// What to do with references to missing documents, for every target (default
    /// [`Dangling::Error`]). [`Dangling::Skip`] leaves a polymorphic reference unloaded, as
    /// [`Dangling::Keep`] does: an element is not removed from a mixed array.
    pub fn dangling(mut self, policy: Dangling) -> Self {
        for p in &mut self.parts {
            p.part.set_dangling(policy);
        }
        self
    }
}

impl<Root, E: PolyTargets> fmt::Debug for PolyPopulate<Root, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PolyPopulate({} -> {})",
            self.path,
            E::TARGETS.join(" | ")
        )
    }
}

impl<Root: Model, E: PolyTargets> IntoPopulate<Root> for PolyPopulate<Root, E> {
    fn add_to(self, loading: &mut Loading<Root>) {
        let steps = self.parts.into_iter().map(|p| p.part.into_step()).collect();
        super::query::add_steps(loading, steps);
    }
}

impl<Root: Model, W, E: PolyTargets> IntoPopulate<Root> for PolyPath<Root, W, E> {
    fn add_to(self, loading: &mut Loading<Root>) {
        self.populate().add_to(loading);
    }
}
