//! What a read loads after its documents: the one interface through which a feature (populate)
//! adds work to the read builders (`find`, `find_one`, streams, pages). A builder holds a
//! [`Loading`] and hands it its query; it decides nothing about what is loaded.

use std::any::Any;

use bson::Document;
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::BoxFuture;
use crate::{Odm, Result};

/// The work a read does after (or instead of) its plain query, given by a feature.
pub(crate) trait Loads<T>: Send + Sync {
    /// How many paths are loaded (for the builders' `Debug`).
    fn len(&self) -> usize;

    /// Runs the query (`filter`, the model's restrictions included) and loads what it adds to
    /// the documents.
    fn find<'a>(
        &'a self,
        odm: &'a Odm,
        filter: Document,
        options: FindOptions,
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

/// What one read loads after its documents: nothing, or a feature's [`Loads`].
pub(crate) struct Loading<T>(Option<Box<dyn Loads<T>>>);

impl<T> Default for Loading<T> {
    fn default() -> Self {
        Loading(None)
    }
}

impl<T: 'static> Loading<T> {
    /// The feature's loads of type `L`, made with `L::default()` the first time it is asked
    /// for. A read holds the loads of one feature at most.
    pub(crate) fn get_or_default<L: Loads<T> + Default + 'static>(&mut self) -> &mut L {
        let loads = self.0.get_or_insert_with(|| Box::<L>::default());
        match loads.as_any_mut().downcast_mut::<L>() {
            Some(loads) => loads,
            None => unreachable!("a read holds the loads of one feature"),
        }
    }
}

impl<T> Loading<T> {
    /// The loads, when there are any.
    pub(crate) fn get(&self) -> Option<&dyn Loads<T>> {
        self.0.as_deref()
    }

    /// How many paths are loaded.
    pub(crate) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |l| l.len())
    }
}
