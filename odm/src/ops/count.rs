//! Counting documents.

use mongodb::options::{CountOptions, EstimatedDocumentCountOptions};
use mongodb::ClientSession;

use super::into_future;
use crate::query::Filter;
use crate::{Error, Model, Odm, Result};

/// Builder returned by [`Odm::count`]. Sends one `aggregate`.
#[must_use = "the count runs when awaited"]
pub struct Count<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    options: CountOptions,
    session: Option<&'a mut ClientSession>,
}

impl<T> std::fmt::Debug for Count<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Count")
            .field("filter", &self.filter)
            .field("options", &self.options)
            .finish()
    }
}

impl<'a, T: Model> Count<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>) -> Self {
        Count {
            odm,
            filter,
            options: CountOptions::default(),
            session: None,
        }
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<u64> {
        let filter = crate::engine::model_filter(self.filter)?;
        let coll = self.odm.raw_collection::<T>();
        let action = coll.count_documents(filter).with_options(self.options);
        crate::engine::send!(action, self.session).map_err(Odm::driver_error::<T>)
    }
}

into_future!(Count => u64, "count", |n: &u64| Some(*n));
crate::engine::read_options!(Count, options);

/// Builder returned by [`Odm::estimated_count`]. Sends one `count` without a filter.
#[must_use = "the count runs when awaited"]
pub struct EstimatedCount<'a, T> {
    odm: &'a Odm,
    options: EstimatedDocumentCountOptions,
    _model: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for EstimatedCount<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EstimatedCount")
            .field("options", &self.options)
            .finish()
    }
}

impl<'a, T: Model> EstimatedCount<'a, T> {
    pub(crate) fn new(odm: &'a Odm) -> Self {
        EstimatedCount {
            odm,
            options: EstimatedDocumentCountOptions::default(),
            _model: std::marker::PhantomData,
        }
    }

    async fn run(self) -> Result<u64> {
        let entry = T::entry();
        let shared = if entry.kind.is_some() {
            Some("its collection holds the other kinds of its enum too")
        } else if entry.soft_delete.is_some() {
            Some("its collection holds its soft-deleted documents too")
        } else {
            None
        };
        if let Some(why) = shared {
            return Err(Error::Unsupported(format!(
                "an estimated count of `{}` in `{}`: {why}; count them with `count`",
                entry.type_name,
                T::COLLECTION
            )));
        }
        let coll = self.odm.raw_collection::<T>();
        coll.estimated_document_count()
            .with_options(self.options)
            .await
            .map_err(Odm::driver_error::<T>)
    }
}

into_future!(EstimatedCount => u64, "estimated_count", |n: &u64| Some(*n));
crate::engine::read_options!(@every EstimatedCount, options);
