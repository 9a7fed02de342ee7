//! Finding documents: `find`, decoded as the model or as another type, with what a feature
//! loads after the documents (populate).

use std::marker::PhantomData;

use mongodb::options::FindOptions;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use super::into_future;
use crate::engine::{IntoPopulate, Loading, Plan};
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
    pub(super) options: Box<FindOptions>,
    session: Option<&'a mut ClientSession>,
    loading: Loading<T>,
}

impl<T> std::fmt::Debug for Find<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Find")
            .field("filter", &self.filter)
            .field("options", &self.options)
            .field("populate", &self.loading.len())
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
            loading: Loading::default(),
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

    /// Lets the server write temporary files for a large sort (`allowDiskUse`).
    pub fn allow_disk_use(mut self, allow: bool) -> Self {
        self.options.allow_disk_use = Some(allow);
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
    ///
    /// ```no_run
    /// use odm::prelude::*;
    ///
    /// #[derive(Model, Serialize, Deserialize, Debug)]
    /// #[odm(collection = "authors")]
    /// struct Author {
    ///     #[serde(rename = "_id")]
    ///     id: i32,
    ///     name: String,
    /// }
    ///
    /// #[derive(Model, Serialize, Deserialize, Debug)]
    /// #[odm(collection = "books")]
    /// struct Book {
    ///     #[serde(rename = "_id")]
    ///     id: i32,
    ///     title: String,
    ///     #[reference]
    ///     author: Ref<Author>,
    /// }
    ///
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// // One `find` of the books, then one `find {_id: {$in: [...]}}` of their authors.
    /// let books = odm
    ///     .find(Book::title().eq("The Great Gatsby"))
    ///     .populate(Book::author())
    ///     .await?;
    /// for book in &books {
    ///     println!("{} by {}", book.title, book.author.loaded()?.name);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn populate(mut self, path: impl IntoPopulate<T>) -> Self {
        self.loading.add(path);
        self
    }

    /// How the populate loads the references (default: the handle's,
    /// [`Odm::with_populate_plan`], itself [`Plan::Auto`] by default). [`Plan::Lookup`] sends
    /// the query and every level as ONE `aggregate` (plus `getMore`s) instead of one `find` plus
    /// one `find` per relation and level; see [`Plan`] and the cost rule of
    /// [`crate::populate::choose`].
    ///
    /// A [stream](Find::stream) and a keyset [page](Find::page) populate each batch or page
    /// with the `$in` plan, whatever the plan: their documents come from a `find` cursor read a
    /// batch at a time.
    pub fn populate_plan(mut self, plan: Plan) -> Self {
        self.loading.set_plan(plan);
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
            loading: self.loading,
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

    pub(super) async fn run(self) -> Result<Vec<T>> {
        let odm = self.odm;
        let docs = match self.loading.get() {
            None => Self::fetch(odm, self.filter, *self.options, self.session).await?,
            Some(loads) => {
                let filter = crate::engine::model_filter(self.filter)?;
                loads
                    .find(
                        odm,
                        filter,
                        *self.options,
                        self.loading.plan(),
                        self.session,
                    )
                    .await?
            }
        };
        crate::pipeline::read::<T>(odm, docs.len());
        Ok(docs)
    }
}

into_future!(Find => Vec<T>, "find", |v: &Vec<T>| Some(v.len() as u64));
crate::engine::read_options!(Find, options);

/// What a [`Find`] was built with: the query, its options, the caller's session and what it
/// loads after its documents.
pub(crate) struct FindParts<'a, T> {
    pub(crate) odm: &'a Odm,
    pub(crate) filter: Filter<T>,
    pub(crate) options: FindOptions,
    pub(crate) session: Option<&'a mut ClientSession>,
    pub(crate) loading: Loading<T>,
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
