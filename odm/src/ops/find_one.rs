//! Finding one document, or only its `_id`.

use std::marker::PhantomData;

use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use super::find::{Find, FindAs};
use super::into_future;
use crate::engine::{IntoPopulate, Plan};
use crate::query::{Filter, Projection, Sort};
use crate::{Model, Odm, Result};

/// Builder returned by [`Odm::find_one`] and [`Odm::get`]. Sends one `find`, plus what
/// [`FindOne::populate`] adds.
#[must_use = "the query runs when awaited"]
pub struct FindOne<'a, T> {
    inner: Find<'a, T>,
}

impl<T> std::fmt::Debug for FindOne<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<'a, T: Model> FindOne<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>) -> Self {
        FindOne {
            inner: Find::new(odm, filter).limit(1),
        }
    }

    /// Which document comes first when several match.
    pub fn sort(self, sort: Sort<T>) -> Self {
        FindOne {
            inner: self.inner.sort(sort),
        }
    }

    /// Skips the first `n` matches.
    pub fn skip(self, n: u64) -> Self {
        FindOne {
            inner: self.inner.skip(n),
        }
    }

    /// Returns only some fields; see [`Find::projection`].
    pub fn projection(self, projection: Projection<T>) -> Self {
        FindOne {
            inner: self.inner.projection(projection),
        }
    }

    /// Runs inside the caller's session.
    pub fn session(self, session: &'a mut ClientSession) -> Self {
        FindOne {
            inner: self.inner.session(session),
        }
    }

    /// Loads the documents a reference field points to; see [`Find::populate`].
    pub fn populate(self, path: impl IntoPopulate<T>) -> Self {
        FindOne {
            inner: self.inner.populate(path),
        }
    }

    /// How the populate loads the references; see [`Find::populate_plan`].
    pub fn populate_plan(self, plan: Plan) -> Self {
        FindOne {
            inner: self.inner.populate_plan(plan),
        }
    }

    /// Decodes the result into `U` instead.
    pub fn into_type<U: DeserializeOwned + Send + 'a>(self) -> FindOneAs<'a, T, U> {
        FindOneAs {
            inner: self.inner.into_type(),
        }
    }

    async fn run(self) -> Result<Option<T>> {
        Ok(self.inner.run().await?.into_iter().next())
    }
}

into_future!(FindOne => Option<T>, "find_one", |v: &Option<T>| Some(v.is_some().into()));
crate::engine::read_options!(FindOne, inner.options);

/// Builder returned by [`FindOne::into_type`]; `.await` it for an `Option<U>`.
#[must_use = "the query runs when awaited"]
pub struct FindOneAs<'a, T, U> {
    inner: FindAs<'a, T, U>,
}

impl<T, U> std::fmt::Debug for FindOneAs<'_, T, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<'a, T: Model, U: DeserializeOwned + Send + 'a> FindOneAs<'a, T, U> {
    async fn run(self) -> Result<Option<U>> {
        Ok(self.inner.run().await?.into_iter().next())
    }
}

into_future!(FindOneAs<U> => Option<U>, "find_one", |v: &Option<U>| Some(v.is_some().into()));

/// Builder returned by [`Odm::find_id`]: the `_id` of the first match, projecting only `_id`
/// (the seed's `db.hosts.findOne({ipaddr: ip}, {_id: 1})`). Sends one `find`.
#[must_use = "the query runs when awaited"]
pub struct FindId<'a, T: Model> {
    inner: FindOneAs<'a, T, IdOnly<T::Id>>,
}

/// A document read for its `_id` alone.
#[derive(Debug, serde::Deserialize)]
#[doc(hidden)]
pub struct IdOnly<I> {
    #[serde(rename = "_id")]
    id: I,
}

impl<T: Model> std::fmt::Debug for FindId<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<'a, T: Model> FindId<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>) -> Self {
        FindId {
            inner: FindOne::new(odm, filter)
                .projection(Projection::include(&T::id_field()))
                .into_type(),
        }
    }

    /// Runs inside the caller's session.
    pub fn session(self, session: &'a mut ClientSession) -> Self {
        FindId {
            inner: FindOneAs {
                inner: FindAs {
                    find: self.inner.inner.find.session(session),
                    _result: PhantomData,
                },
            },
        }
    }

    async fn run(self) -> Result<Option<T::Id>> {
        Ok(self.inner.run().await?.map(|d| d.id))
    }
}

into_future!(FindId => Option<T::Id>, "find_id", |v: &Option<T::Id>| Some(v.is_some().into()));
