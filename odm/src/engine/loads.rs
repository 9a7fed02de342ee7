//! What a read loads after its documents: the one interface through which a feature (populate)
//! adds work to the read builders (`find`, `find_one`, streams, pages). A builder holds a
//! [`Loading`] and hands it its query; it decides nothing about what is loaded.

use std::any::Any;

use bson::Document;
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::{BoxFuture, Plan};
use crate::{Odm, Result};

/// The work a read does after (or instead of) its plain query, given by a feature.
pub(crate) trait Loads<T>: Send + Sync {
    /// How many paths are loaded (for the builders' `Debug`).
    fn len(&self) -> usize;

    /// Runs the query (`filter`, the model's restrictions included) and loads what it adds to
    /// the documents, with the plan the read asked for (`None`: the handle's).
    fn find<'a>(
        &'a self,
        odm: &'a Odm,
        filter: Document,
        options: FindOptions,
        plan: Option<Plan>,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Vec<T>>>;

    /// Loads what it adds to a batch of documents already found (a stream's batch, a page).
    fn batch<'a>(
        &'a self,
        odm: &'a Odm,
        docs: &'a mut [T],
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<()>>;

    /// Itself, for the feature that made it to add to it.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// What [`Find::populate`](crate::ops::Find::populate) accepts: a reference path, or a
/// [`Populate`](crate::populate::Populate) with options.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a reference path of `{Root}`",
    label = "not a reference field of `{Root}`",
    note = "populate takes a reference field of `{Root}`, e.g. `Product::parts()`; references of the referenced documents are populated one level down: `Product::parts().populate().then(Part::supplier())`"
)]
pub trait IntoPopulate<Root> {
    /// Adds itself to what a read loads after its documents.
    #[doc(hidden)]
    fn add_to(self, loading: &mut Loading<Root>);
}

/// What one read loads after its documents: nothing, or a feature's [`Loads`]; and the
/// populate plan the read asked for.
#[doc(hidden)]
pub struct Loading<T> {
    loads: Option<Box<dyn Loads<T>>>,
    plan: Option<Plan>,
}

impl<T> std::fmt::Debug for Loading<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loading")
            .field("paths", &self.len())
            .field("plan", &self.plan)
            .finish()
    }
}

impl<T> Default for Loading<T> {
    fn default() -> Self {
        Loading {
            loads: None,
            plan: None,
        }
    }
}

impl<T: 'static> Loading<T> {
    /// The feature's loads of type `L`, made with `L::default()` the first time it is asked
    /// for. A read holds the loads of one feature at most: `L` replaces loads of another type.
    pub(crate) fn get_or_default<L: Loads<T> + Default + 'static>(&mut self) -> &mut L {
        let is_l = self
            .loads
            .as_mut()
            .is_some_and(|l| l.as_any_mut().downcast_mut::<L>().is_some());
        if !is_l {
            self.loads = Some(Box::<L>::default());
        }
        self.loads
            .as_mut()
            .and_then(|l| l.as_any_mut().downcast_mut::<L>())
            .expect("the loads were just made of type L")
    }
}

impl<T> Loading<T> {
    /// Adds a populate path.
    pub(crate) fn add(&mut self, path: impl IntoPopulate<T>) {
        path.add_to(self);
    }

    /// The populate plan the read asks for.
    pub(crate) fn set_plan(&mut self, plan: Plan) {
        self.plan = Some(plan);
    }

    /// The populate plan the read asked for (`None`: the handle's).
    pub(crate) fn plan(&self) -> Option<Plan> {
        self.plan
    }

    /// The loads, when there are any.
    pub(crate) fn get(&self) -> Option<&dyn Loads<T>> {
        self.loads.as_deref()
    }

    /// How many paths are loaded.
    pub(crate) fn len(&self) -> usize {
        self.loads.as_ref().map_or(0, |l| l.len())
    }
}
