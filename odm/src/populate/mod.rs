//! Populate: the application-level join of the seeds, done in a constant number of commands.
//!
//! `odm.find::<Product>(filter).populate(Product::parts())` sends one `find` for the products
//! and one `{_id: {$in: [...]}}` `find` for the parts they reference, whatever the number of
//! products: the ids of every product are collected, deduplicated and fetched at once (split
//! into batches only when one command would pass MongoDB's 16 MB limit). Nested paths
//! (`Product::parts().then(Part::supplier())`) add one `find` per level, and independent
//! relations of the same level are fetched concurrently.
//!
//! The other direction, a parent reference (`LogMsg.host`), has no ids to collect on the
//! parent: [`Odm::children`](crate::Odm::children) loads the children of many parents with
//! a per-parent sort and limit in one `aggregate`.

mod children;
mod engine;
mod lookup;
mod poly;
mod query;
mod step;

pub use crate::reference::{RefContainer, RefSlots};
pub use children::{Children, ChildrenOf};
pub use engine::Step;
pub(crate) use engine::{populate_all, BoxFuture};
use lookup::LookupError;
pub use lookup::{choose, Plan, Shape, LOOKUP_MAX_PARENTS};
pub use poly::{PolyContainer, PolyPart, PolyPath, PolyPopulate, PolySlots, PolyTargets};

use std::fmt;

use bson::Document;

pub use crate::engine::IntoPopulate;
use crate::engine::Loading;
use crate::model::Model;
use crate::path::{Field, Single};
use crate::query::{Filter, Projection, Sort};
use crate::reference::{Ref, RefTarget};

/// How a populate finds the references to `T` in a document.
pub(crate) type SlotsFn<Root, T> =
    std::sync::Arc<dyn for<'a> Fn(&'a mut Root) -> RefSlots<'a, T> + Send + Sync>;

/// Field types that hold one reference to `P` (`Ref<P>`, `Option<Ref<P>>`): the child side of a
/// two-way reference, which `reassign` and `verify_inverse` take.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a single reference to `{P}`",
    label = "pass the child's side of the two-way reference (its `#[parent]` field)",
    note = "e.g. `odm.reassign(Task::owner(), task, person)`, not `Person::tasks()`"
)]
pub trait SingleRef<P: Model> {}
impl<P: Model> SingleRef<P> for Ref<P> {}
impl<P: Model> SingleRef<P> for Option<Ref<P>> {}

/// The typed path of a reference field: `Product::parts()`.
///
/// Dereferences to the [`Field`] (for filters and updates on the stored ids), and is what
/// [`Find::populate`](crate::ops::Find::populate) and [`Odm::children`](crate::Odm::children)
/// take.
pub struct RefPath<Root, W, T: RefTarget> {
    field: Field<Root, W, Single>,
    pub(crate) slots: fn(&mut Root) -> RefSlots<'_, T>,
    pub(crate) many: bool,
    pub(crate) inverse: Option<fn() -> Inverse>,
    /// Stored as DBRefs (`#[serde(with = "odm::dbref")]`).
    dbref: bool,
}

/// The other side of a two-way reference: its stored path and array bound.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Inverse {
    pub(crate) path: String,
    pub(crate) max: Option<u32>,
}

impl Inverse {
    /// Used by the generated accessors: the inverse field's path and bound.
    #[doc(hidden)]
    pub(crate) fn from_info(info: &crate::catalog::ReferenceInfo) -> Self {
        Inverse {
            path: info.path.clone(),
            max: info.max,
        }
    }

    pub fn of_field<R, W, M>(field: &Field<R, W, M>) -> Self {
        Inverse {
            path: field.path().to_owned(),
            max: field.max_len(),
        }
    }
}

impl<Root, W: RefContainer<T>, T: RefTarget> RefPath<Root, W, T> {
    /// Used by the generated accessors.
    #[doc(hidden)]
    pub fn new(field: Field<Root, W, Single>, slots: fn(&mut Root) -> RefSlots<'_, T>) -> Self {
        RefPath {
            field,
            slots,
            many: W::MANY,
            inverse: None,
            dbref: false,
        }
    }
}

impl<Root, W, T: RefTarget> RefPath<Root, W, T> {
    /// Used by the generated accessors: `slots` picks the field's references, `many` says
    /// whether it is an array of them (the derive knows both from the field's type).
    #[doc(hidden)]
    pub fn of_field(
        field: Field<Root, W, Single>,
        many: bool,
        slots: fn(&mut Root) -> RefSlots<'_, T>,
    ) -> Self {
        RefPath {
            field,
            slots,
            many,
            inverse: None,
            dbref: false,
        }
    }

    /// Used by the generated accessors of references stored as DBRefs: `W` is the field's type
    /// with `Ref<T>` as `odm::dbref::Stored<Ref<T>>`, whose values are encoded as DBRefs.
    #[doc(hidden)]
    pub fn stored_as_dbref(
        field: Field<Root, W, Single>,
        slots: fn(&mut Root) -> RefSlots<'_, T>,
        many: bool,
    ) -> Self {
        RefPath {
            dbref: true,
            ..RefPath::of_field(field, many, slots)
        }
    }

    /// Whether the references are stored as DBRefs.
    pub(crate) fn is_dbref(&self) -> bool {
        self.dbref
    }

    /// Used by the generated accessors of two-way references: the stored path of the field on
    /// `T` that points back (computed lazily, as the two accessors name each other).
    #[doc(hidden)]
    pub fn with_inverse(mut self, inverse: fn() -> Inverse) -> Self {
        self.inverse = Some(inverse);
        self
    }
}

impl<Root: 'static, W, T: Model> RefPath<Root, W, T> {
    /// Documents whose reference is the document with id `id`:
    /// `{path: id}` (for an array of references, any element).
    ///
    /// A reference stored as a DBRef is matched by `{path.$ref, path.$id}` (an element of an
    /// array by the whole DBRef).
    pub fn refers_to(&self, id: impl crate::path::Value<T::Id>) -> Filter<Root> {
        if self.dbref {
            return self.refers_to_any([id]);
        }
        Field::<Root, T::Id>::trusted(self.field.path().to_owned()).eq(id)
    }

    /// Documents whose reference is one of `ids` (`$in`).
    pub fn refers_to_any<V: crate::path::Value<T::Id>>(
        &self,
        ids: impl IntoIterator<Item = V>,
    ) -> Filter<Root> {
        if self.dbref {
            let mut error = None;
            let what = || format!("filter value for `{}`", self.field.path());
            let filters: Vec<Filter<Root>> = ids
                .into_iter()
                .map(|id| {
                    let id = crate::query::encode(&id, what, &mut error);
                    let path = self.field.path();
                    let f = crate::reference::dbref::refers_to_filter(
                        path,
                        self.many,
                        T::COLLECTION,
                        id,
                    );
                    Filter::from_parts(f, None)
                })
                .collect();
            // No ids: `{path: {$in: []}}` matches nothing, as without DBRefs.
            let doc = match filters.len() {
                0 => crate::literal::is_in(self.field.path(), Vec::new()),
                _ => Filter::any_of(filters).as_document().clone(),
            };
            return Filter::from_parts(doc, error);
        }
        Field::<Root, T::Id>::trusted(self.field.path().to_owned()).is_in(ids)
    }

    /// A populate of this path with options: `.select(...)`, `.filter(...)`, `.sort(...)`,
    /// `.dangling(...)`, `.then(...)` for the next level.
    pub fn populate(&self) -> Populate<Root, T> {
        let mut p = Populate::with_slots(
            self.field.path().to_owned(),
            std::sync::Arc::new(self.slots),
        );
        p.dbref = self.dbref;
        p
    }
}

impl<Root, T: Model> Populate<Root, T> {
    /// A populate with the defaults, finding the references with `slots`.
    pub(crate) fn with_slots(path: String, slots: SlotsFn<Root, T>) -> Self {
        Populate {
            path,
            slots,
            projection: None,
            filter: None,
            sort: None,
            dangling: Dangling::default(),
            batch_size: None,
            limit: None,
            children: Vec::new(),
            dbref: false,
        }
    }
}

impl<Root, W, T: RefTarget> AsRef<RefPath<Root, W, T>> for RefPath<Root, W, T> {
    fn as_ref(&self) -> &Self {
        self
    }
}

impl<Root, W, T: RefTarget> std::ops::Deref for RefPath<Root, W, T> {
    type Target = Field<Root, W, Single>;
    fn deref(&self) -> &Self::Target {
        &self.field
    }
}

impl<Root, W, T: Model> fmt::Debug for RefPath<Root, W, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RefPath({} -> {})", self.field.path(), T::COLLECTION)
    }
}

/// What populate does with a reference whose document does not exist (it was deleted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dangling {
    /// Fail with [`Error::DanglingReference`](crate::Error::DanglingReference), naming the
    /// document, the field and the missing id. The default: a silently incomplete result is
    /// worse than an error.
    #[default]
    Error,
    /// Leave it out: removed from a `Vec<Ref<T>>`, set to `None` in an `Option<Ref<T>>`, left
    /// unloaded in a plain `Ref<T>`.
    Skip,
    /// Keep the reference, unloaded (its id is still readable).
    Keep,
}

/// One populate path with its options; build it from a [`RefPath`] with `.populate()`, or pass
/// the `RefPath` itself for the defaults.
pub struct Populate<Root, T: Model> {
    pub(crate) path: String,
    pub(crate) slots: SlotsFn<Root, T>,
    pub(crate) projection: Option<Document>,
    pub(crate) filter: Option<Filter<T>>,
    pub(crate) sort: Option<Document>,
    pub(crate) dangling: Dangling,
    pub(crate) batch_size: Option<usize>,
    /// At most this many references of each document are loaded.
    pub(crate) limit: Option<usize>,
    pub(crate) children: Vec<Box<dyn Step<T>>>,
    /// The references are stored as DBRefs (their ids at `path.$id`).
    pub(crate) dbref: bool,
}

impl<Root, T: Model> fmt::Debug for Populate<Root, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Populate")
            .field("path", &self.path)
            .field("target", &T::COLLECTION)
            .field("projection", &self.projection)
            .field("sort", &self.sort)
            .field("limit_per_parent", &self.limit)
            .field("dangling", &self.dangling)
            .field("nested", &self.children.len())
            .finish()
    }
}

impl<Root: Model, T: Model> Populate<Root, T> {
    /// Loads only these fields of the referenced documents (`_id` is always loaded). Fields
    /// left out must be `Option` or `#[serde(default)]` in `T`, or decoding fails naming them.
    pub fn select(mut self, projection: Projection<T>) -> Self {
        self.projection = Some(projection.into_document());
        self
    }

    /// Loads only referenced documents that match `filter`; references to the others stay
    /// unloaded (they are not dangling).
    pub fn filter(mut self, filter: Filter<T>) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Orders an array of references by the referenced documents (references that were not
    /// loaded go last, in their stored order). Documents equal by `sort` are ordered by `_id`,
    /// so the order is the same whichever plan loads them.
    pub fn sort(mut self, sort: Sort<T>) -> Self {
        let mut sort = sort.into_document();
        if !sort.contains_key("_id") {
            sort.insert("_id", 1);
        }
        self.sort = Some(sort);
        self
    }

    /// Loads at most `n` references of each document (at least one): the first `n` in the
    /// order of [`sort`](Self::sort) when there is one, else in their stored order. The others
    /// stay in the array, unloaded (their ids readable), so saving the document keeps them;
    /// sorted, they follow the loaded ones in their stored order. In a mixed array of
    /// polymorphic references, the limit counts the references to this target, and the array is
    /// not reordered.
    ///
    /// References past the limit are not checked: with [`Dangling::Error`] or
    /// [`Dangling::Skip`], a missing document is reported (or removed) only for a document of
    /// which fewer than `n` references were loaded. The lookup plan limits inside the
    /// `$lookup` when the populate is sorted (`$sort`, `$limit`), so only `n` documents per
    /// parent come back; the `$in` plan loads every referenced document and keeps `n`. So a
    /// stored document that does not decode is an error under the `$in` plan even past the
    /// limit, where the lookup plan, which does not read it, loads the first `n`.
    pub fn limit_per_parent(mut self, n: u32) -> Self {
        self.limit = Some(usize::try_from(n.max(1)).unwrap_or(usize::MAX));
        self
    }

    /// What to do with references to documents that do not exist (default
    /// [`Dangling::Error`]).
    pub fn dangling(mut self, policy: Dangling) -> Self {
        self.dangling = policy;
        self
    }

    /// At most `n` ids per `find` (default: as many as fit well under 16 MB).
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = Some(n.max(1));
        self
    }

    /// Populates a path of the referenced documents too (the next level: one more `find`).
    pub fn then(mut self, next: impl IntoPopulate<T>) -> Self {
        self.children.extend(query::steps_of(next));
        self
    }
}

impl<Root: Model, T: Model> IntoPopulate<Root> for Populate<Root, T> {
    fn add_to(self, loading: &mut Loading<Root>) {
        query::add_steps(loading, vec![Box::new(self)]);
    }
}

impl<Root: Model, W, T: Model> IntoPopulate<Root> for RefPath<Root, W, T> {
    fn add_to(self, loading: &mut Loading<Root>) {
        self.populate().add_to(loading);
    }
}
