//! Finding documents: `find`, decoded as the model or as another type, with populate.

use std::marker::PhantomData;

use mongodb::options::FindOptions;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use super::into_future;
use crate::populate::{populate_all, IntoPopulate, Plan, Step};
use crate::query::{Filter, Projection, Sort};
use crate::{Model, Odm, Result};

/// Builder returned by [`Odm::find`]. Sends one `find`, plus one `getMore` per further batch,
/// plus what [`Find::populate`] adds.
///
/// `.await` it for a `Vec<T>`; [`Find::into_type`] decodes into a view type instead.
#[must_use = "the query runs when awaited"]
pub struct Find<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    /// Boxed: the driver's options are large, and the builder moves into its future.
    options: Box<FindOptions>,
    session: Option<&'a mut ClientSession>,
    populate: Vec<Box<dyn Step<T>>>,
    plan: Option<Plan>,
}

impl<T> std::fmt::Debug for Find<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Find")
            .field("filter", &self.filter)
            .field("options", &self.options)
            .field("populate", &self.populate.len())
            .finish()
    }
}

impl<'a, T: Model> Find<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>) -> Self {
        Find {
            odm,
            filter,
            options: Box::default(),
            session: None,
            populate: Vec::new(),
            plan: None,
        }
    }

    /// Sort order.
    pub fn sort(mut self, sort: Sort<T>) -> Self {
        self.options.sort = Some(sort.into_document());
        self
    }

    /// Skips the first `n` matches.
    pub fn skip(mut self, n: u64) -> Self {
        self.options.skip = Some(n);
        self
    }

    /// Returns at most `n` documents.
    pub fn limit(mut self, n: u64) -> Self {
        self.options.limit = Some(i64::try_from(n).unwrap_or(i64::MAX));
        self
    }

    /// Documents per `getMore` batch.
    pub fn batch_size(mut self, n: u32) -> Self {
        self.options.batch_size = Some(n);
        self
    }

    /// Returns only some fields; decode into a type that has just those with
    /// [`Find::into_type`].
    pub fn projection(mut self, projection: Projection<T>) -> Self {
        self.options.projection = Some(projection.into_document());
        self
    }

    /// Runs inside the caller's session (and its transaction, if one is started).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// Loads the documents a reference field points to, after the query: one more `find`
    /// (`{_id: {$in: ids}}`) per path and level, whatever the number of documents found.
    /// Several paths of one level are fetched concurrently. See [`crate::populate`].
    pub fn populate(mut self, path: impl IntoPopulate<T>) -> Self {
        self.populate.extend(path.into_steps());
        self
    }

    /// How the populate loads the references (default: the handle's,
    /// [`Odm::with_populate_plan`], itself [`Plan::Auto`] by default). [`Plan::Lookup`] sends
    /// the query and every level as ONE `aggregate` (plus `getMore`s) instead of one `find` plus
    /// one `find` per relation and level; see [`crate::populate::Plan`] and the cost rule of
    /// [`crate::populate::choose`].
    ///
    /// A [stream](Find::stream) and a keyset [page](Find::page) populate each batch or page
    /// with the `$in` plan, whatever the plan: their documents come from a `find` cursor read a
    /// batch at a time.
    pub fn populate_plan(mut self, plan: Plan) -> Self {
        self.plan = Some(plan);
        self
    }

    /// Decodes the results into `U` instead (a view with fewer fields, typically used with a
    /// projection). A view is not populated.
    pub fn into_type<U: DeserializeOwned + Send + 'a>(self) -> FindAs<'a, T, U> {
        FindAs {
            find: self,
            _result: PhantomData,
        }
    }

    /// The builder's parts, for the stream and page builders (`ops::stream`, `paging`).
    pub(crate) fn into_parts(self) -> FindParts<'a, T> {
        FindParts {
            odm: self.odm,
            filter: self.filter,
            options: *self.options,
            session: self.session,
            populate: self.populate,
        }
    }

    async fn fetch<U: DeserializeOwned>(
        odm: &Odm,
        filter: Filter<T>,
        options: FindOptions,
        session: Option<&mut ClientSession>,
    ) -> Result<Vec<U>> {
        crate::engine::find_decoded::<T, U>(
            odm,
            crate::engine::model_filter(filter)?,
            options,
            session,
        )
        .await
    }

    /// The plan this query runs with: the one asked for, or the cost rule's.
    fn plan(&self) -> Plan {
        if self.populate.is_empty() {
            return Plan::In;
        }
        match self.plan.unwrap_or(self.odm.populate_plan()) {
            Plan::Auto => {
                let mut shape = crate::populate::Shape {
                    levels: self.populate.iter().map(|s| s.levels()).max().unwrap_or(0),
                    relations: self.populate.iter().map(|s| s.relations()).sum(),
                    parents: self
                        .options
                        .limit
                        .filter(|l| *l != 0)
                        .map(i64::unsigned_abs),
                    sharded: self.odm.is_sharded(),
                    in_session: self.session.is_some(),
                    sub_pipelines: false,
                };
                // Sub-pipelines can only turn the `$lookup` plan into the `$in` plan: the
                // stages are built to find out only when the rest of the shape chose `$lookup`.
                if crate::populate::choose(&shape) == Plan::In {
                    return Plan::In;
                }
                shape.sub_pipelines = self.populate.iter().enumerate().any(|(i, s)| {
                    s.lookup_stages(i)
                        .map_or(true, |st| crate::populate::has_sub_pipeline(&st))
                });
                crate::populate::choose(&shape)
            }
            plan => plan,
        }
    }

    pub(super) async fn run(self) -> Result<Vec<T>> {
        // The populating paths are boxed: a plain query awaits a future the size of the
        // driver's.
        let mut plan = self.plan();
        // The cost rule never chooses the lookup plan on a sharded cluster: a handle that does
        // not know yet what it talks to asks once (one `hello` per handle, only then).
        let auto = self.plan.unwrap_or(self.odm.populate_plan()) == Plan::Auto;
        if plan == Plan::Lookup && auto && !self.odm.knows_deployment() {
            self.odm.deployment_has_transactions().await?;
            plan = self.plan();
        }
        if plan == Plan::Lookup {
            return Box::pin(self.run_lookup()).await;
        }
        self.run_in().await
    }

    /// The `$lookup` plan, falling back to the `$in` plan when the server refuses it and the
    /// plan was chosen rather than forced.
    async fn run_lookup(self) -> Result<Vec<T>> {
        let filter = crate::engine::model_filter(self.filter.clone())?;
        let forced = self.plan.unwrap_or(self.odm.populate_plan()) == Plan::Lookup;
        let mut session = self.session;
        let found = crate::populate::find_with_lookup::<T>(
            self.odm,
            filter,
            &self.options,
            &self.populate,
            session.as_deref_mut(),
        )
        .await;
        match found {
            Ok(docs) => {
                crate::pipeline::read::<T>(self.odm, docs.len());
                Ok(docs)
            }
            Err(crate::populate::LookupError::Failed(e)) => Err(e),
            Err(crate::populate::LookupError::Refused(e))
                if forced || !crate::populate::is_refusal(&e) =>
            {
                Err(crate::populate::refused::<T>(e))
            }
            Err(crate::populate::LookupError::Refused(_)) => {
                Find { session, ..self }.run_in().await
            }
        }
    }

    /// The `$in` plan: the query, then one `find` per relation and level.
    async fn run_in(self) -> Result<Vec<T>> {
        let mut session = self.session;
        let mut docs =
            Self::fetch(self.odm, self.filter, *self.options, session.as_deref_mut()).await?;
        crate::pipeline::read::<T>(self.odm, docs.len());
        if !self.populate.is_empty() {
            Box::pin(populate_all(self.odm, &mut docs, &self.populate, session)).await?;
        }
        Ok(docs)
    }
}

into_future!(Find => Vec<T>, "find", |v: &Vec<T>| Some(v.len() as u64));

/// What a [`Find`] was built with: the query, its options, the caller's session and the
/// populate steps.
pub(crate) struct FindParts<'a, T> {
    pub(crate) odm: &'a Odm,
    pub(crate) filter: Filter<T>,
    pub(crate) options: FindOptions,
    pub(crate) session: Option<&'a mut ClientSession>,
    pub(crate) populate: Vec<Box<dyn Step<T>>>,
}

/// Builder returned by [`Find::into_type`]; `.await` it for a `Vec<U>`.
#[must_use = "the query runs when awaited"]
pub struct FindAs<'a, T, U> {
    pub(super) find: Find<'a, T>,
    pub(super) _result: PhantomData<fn() -> U>,
}

impl<T, U> std::fmt::Debug for FindAs<'_, T, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.find.fmt(f)
    }
}

impl<'a, T: Model, U: DeserializeOwned + Send + 'a> FindAs<'a, T, U> {
    /// The query this view reads.
    pub(crate) fn into_find(self) -> Find<'a, T> {
        self.find
    }

    pub(super) async fn run(self) -> Result<Vec<U>> {
        let f = self.find;
        Find::<T>::fetch(f.odm, f.filter, *f.options, f.session).await
    }
}

into_future!(FindAs<U> => Vec<U>, "find", |v: &Vec<U>| Some(v.len() as u64));
