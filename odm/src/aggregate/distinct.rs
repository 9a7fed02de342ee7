//! Typed `distinct`.

use std::marker::PhantomData;

use bson::Bson;
use mongodb::options::DistinctOptions;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use crate::error::show_id;
use crate::query::Filter;
use crate::{Error, Model, Odm, Result};

/// Builder returned by [`Odm::distinct`] and [`Odm::distinct_elements`]. Sends one
/// `distinct` (`{distinct: collection, key: path, query: filter}`); `.await` it for a
/// `Vec<X>` in the server's order. A value that does not decode as `X` is
/// [`Error::Decode`] naming the collection and the field. Takes the options of every query
/// (`comment`, `max_time`, `read_concern`, `read_preference`, `hint`, `collation`), sent with
/// the command.
#[must_use = "the command runs when awaited"]
pub struct Distinct<'a, T, X> {
    odm: &'a Odm,
    path: String,
    filter: Filter<T>,
    options: DistinctOptions,
    session: Option<&'a mut ClientSession>,
    _value: PhantomData<fn() -> X>,
}

impl<T, X> std::fmt::Debug for Distinct<'_, T, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Distinct")
            .field("key", &self.path)
            .field("filter", &self.filter)
            .finish()
    }
}

impl<'a, T: Model, X> Distinct<'a, T, X> {
    pub(crate) fn new(odm: &'a Odm, path: String) -> Self {
        Distinct {
            odm,
            path,
            filter: Filter::all(),
            options: DistinctOptions::default(),
            session: None,
            _value: PhantomData,
        }
    }

    /// Among the documents matching `filter` only.
    pub fn filter(mut self, filter: Filter<T>) -> Self {
        self.filter = filter;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }
}

impl<'a, T: Model, X: DeserializeOwned + Send + 'a> Distinct<'a, T, X> {
    async fn run(self) -> Result<Vec<X>> {
        let query = crate::engine::model_filter(self.filter)?;
        let coll = self.odm.raw_collection::<T>();
        let action = coll.distinct(&self.path, query).with_options(self.options);
        let values: Vec<Bson> =
            crate::engine::send!(action, self.session).map_err(Odm::driver_error::<T>)?;
        values
            .into_iter()
            .map(|v| {
                bson::deserialize_from_bson::<X>(v).map_err(|e| Error::Decode {
                    collection: T::COLLECTION.to_owned(),
                    id: show_id(None),
                    path: self.path.clone(),
                    message: e.message.clone().unwrap_or_else(|| e.kind.to_string()),
                })
            })
            .collect()
    }
}

crate::engine::read_options!(Distinct<X>, options);

impl<'a, T: Model, X: DeserializeOwned + Send + 'a> std::future::IntoFuture for Distinct<'a, T, X> {
    type Output = Result<Vec<X>>;
    type IntoFuture =
        std::pin::Pin<Box<dyn std::future::Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
