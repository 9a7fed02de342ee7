//! Counting documents.

use mongodb::options::CountOptions;
use mongodb::ClientSession;

use super::into_future;
use crate::query::Filter;
use crate::{Model, Odm, Result};

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
