//! Typed aggregation: a pipeline built stage by stage over a model's collection, each stage
//! typed by the documents it receives, decoded into a view at the end.
//!
//! [`Odm::aggregate`] starts a pipeline on the documents of a model `T`; the stages take the
//! model's typed paths until one reshapes the documents (`group`, `project`, `unwind`,
//! `lookup`), after which they take the paths of the view the reshaping stage produces
//! ([`view_field!`](crate::view_field)). `.await` sends one `aggregate`, plus one `getMore`
//! per further batch, and decodes each result into the pipeline's output type; a result that
//! does not decode is [`Error::Decode`](crate::Error::Decode) naming the collection, the
//! result's `_id` when it has one, and the field.
//!
//! No value of the caller's becomes an operator, a path or a variable: filters compare with
//! `$eq` and friends as finds do, constants are sent as `{$literal: v}` ([`lit`]), and paths
//! come from generated accessors (or [`Field::at_path`], which refuses `$` segments).
//! [`Aggregate::stage`] is the one way to send a stage of one's own.

mod distinct;
mod expr;
mod group;

use std::marker::PhantomData;

use bson::{doc, Document};
use mongodb::options::AggregateOptions;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use crate::decode::Reading;
use crate::path::{Field, Single};
use crate::populate::RefPath;
use crate::query::{Deferred, Filter, Sort};
use crate::{Model, Odm, Result};

pub use distinct::Distinct;
pub use expr::{lit, month, year, Expr, IntoExpr, Shape};
pub use group::{add_to_set, avg, count, first, last, max, min, push, sum};
pub use group::{Acc, Group, Project, Summable};

/// A view's field, reached by `field`: what [`group!`](crate::group) and
/// [`project!`](crate::project) name each output field with.
#[doc(hidden)]
pub fn slot<V, O>(field: fn(&V) -> &O) -> fn(&V) -> &O {
    field
}

/// The path of a view's field; what [`view_field!`](crate::view_field) expands to.
#[doc(hidden)]
pub fn view_field<V, X>(path: &'static str, _field: fn(&V) -> &X) -> Field<V, X> {
    Field::top(path)
}

impl Odm {
    /// A pipeline over the documents of `T` (restricted to `T`'s kind when it is one, by a
    /// first `$match` on its discriminator). Sends nothing until awaited; then one `aggregate`,
    /// plus one `getMore` per further batch. See [`Aggregate`].
    pub fn aggregate<T: Model>(&self) -> Aggregate<'_, T> {
        Aggregate {
            odm: self,
            stages: Vec::new(),
            error: None,
            options: AggregateOptions::default(),
            session: None,
            _shape: PhantomData,
        }
    }

    /// The distinct values of `field` among the documents of `T`: one `distinct`. See
    /// [`Distinct`].
    pub fn distinct<T: Model, X, M: Shape>(&self, field: &Field<T, X, M>) -> Distinct<'_, T, X> {
        Distinct::new(self, field.path().to_owned())
    }

    /// The distinct elements of the array `field` among the documents of `T` (MongoDB's
    /// `distinct` looks into arrays): one `distinct`.
    pub fn distinct_elements<T: Model, E, M: Shape>(
        &self,
        field: &Field<T, Vec<E>, M>,
    ) -> Distinct<'_, T, E> {
        Distinct::new(self, field.path().to_owned())
    }
}

/// A pipeline over the documents of the model `T`, whose documents at this point have the
/// shape `C` (the model itself, until a stage reshapes them). Built by [`Odm::aggregate`].
///
/// `.await` it for a `Vec<C>`: one `aggregate`, plus one `getMore` per further batch.
#[must_use = "the pipeline runs when awaited"]
pub struct Aggregate<'a, T, C = T> {
    odm: &'a Odm,
    stages: Vec<Document>,
    error: Option<Deferred>,
    options: AggregateOptions,
    session: Option<&'a mut ClientSession>,
    _shape: PhantomData<fn() -> (T, C)>,
}

impl<T, C> std::fmt::Debug for Aggregate<'_, T, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aggregate")
            .field("pipeline", &self.stages)
            .finish()
    }
}

impl<'a, T: Model, C> Aggregate<'a, T, C> {
    fn push(mut self, stage: Document, error: Option<Deferred>) -> Self {
        self.stages.push(stage);
        if self.error.is_none() {
            self.error = error;
        }
        self
    }

    fn reshape<V>(self) -> Aggregate<'a, T, V> {
        Aggregate {
            odm: self.odm,
            stages: self.stages,
            error: self.error,
            options: self.options,
            session: self.session,
            _shape: PhantomData,
        }
    }

    /// `{$match: filter}`: the typed filters of finds, values compared literally.
    pub fn filter(self, filter: Filter<C>) -> Self {
        let (doc, error) = filter.into_parts();
        self.push(doc! { "$match": doc }, error)
    }

    /// `{$sort: sort}`.
    pub fn sort(self, sort: Sort<C>) -> Self {
        self.push(doc! { "$sort": sort.into_document() }, None)
    }

    /// `{$skip: n}`.
    pub fn skip(self, n: u64) -> Self {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        self.push(doc! { "$skip": n }, None)
    }

    /// `{$limit: n}`.
    pub fn limit(self, n: u64) -> Self {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        self.push(doc! { "$limit": n }, None)
    }

    /// `{$group: ..}` written with [`group!`](crate::group): the documents become `Out`s.
    pub fn group<Out>(
        self,
        group: impl FnOnce(Group<C, Out>) -> Group<C, Out>,
    ) -> Aggregate<'a, T, Out> {
        let (stage, error) = group(Group::new()).into_stage();
        self.push(stage, error).reshape()
    }

    /// `{$project: ..}` written with [`project!`](crate::project): the documents become `V`s.
    pub fn project<V>(
        self,
        project: impl FnOnce(Project<C, V>) -> Project<C, V>,
    ) -> Aggregate<'a, T, V> {
        let (stage, error) = project(Project::new()).into_stage();
        self.push(stage, error).reshape()
    }

    /// `{$unwind: "$array"}`: one document per element of `array` (documents whose array is
    /// empty or missing are left out), each holding its element where the view `V` has
    /// `element` (`odm::view_field!(V, subject)`); when that is another path than the
    /// array's, a `{$addFields: {element: "$array"}}` follows.
    pub fn unwind<E, M: Shape, V>(
        self,
        array: &Field<C, Vec<E>, M>,
        element: Field<V, E, Single>,
    ) -> Aggregate<'a, T, V> {
        let from = format!("${}", array.path());
        let mut next = self.push(doc! { "$unwind": &from }, None);
        if element.path() != array.path() {
            next = next.push(doc! { "$addFields": { element.path(): from } }, None);
        }
        next.reshape()
    }

    /// `{$lookup: {from, localField, foreignField: "_id", as}}` generated from a declared
    /// reference of the documents (`Part::product()`): the referenced documents land, as an
    /// array, in the view's field `into` (`odm::view_field!(V, product)`, a `Vec<R>`). When
    /// `R` is a kind sharing its collection with others, the lookup also matches its
    /// discriminator (`pipeline: [{$match: {type: "tool"}}]`), so that only documents of that
    /// kind are joined. A reference stored as DBRefs (`#[serde(with = "odm::dbref")]`) is
    /// joined by its `$id`, for the DBRefs whose `$ref` names `R`'s collection, in a
    /// sub-pipeline (`$getField`, MongoDB 5.0+) that reads `R`'s collection without an index
    /// for each document: populate is cheaper on large collections.
    pub fn lookup<W, R: Model, V>(
        self,
        reference: &RefPath<C, W, R>,
        into: Field<V, Vec<R>, Single>,
    ) -> Aggregate<'a, T, V> {
        let stage = if reference.is_dbref() {
            dbref_lookup::<R>(
                doc! { "refs": format!("${}", reference.path()) },
                doc! { "$in": ["$_id", dbref_ids("$$refs", R::COLLECTION)] },
                into.path(),
            )
        } else {
            lookup_stage::<R>(reference.path(), "_id", into.path())
        };
        self.push(stage, None).reshape()
    }

    /// The other way along a declared reference: the documents of `R` whose `reference`
    /// (`Part::product()`) names each document, as an array in the view's field `into`
    /// (`{$lookup: {from: R's collection, localField: "_id", foreignField: reference, as}}`;
    /// when `R` is a kind, its discriminator matched too, as in [`Aggregate::lookup`]).
    pub fn lookup_referrers<W, R: Model, V>(
        self,
        reference: &RefPath<R, W, C>,
        into: Field<V, Vec<R>, Single>,
    ) -> Aggregate<'a, T, V>
    where
        C: crate::reference::RefTarget,
    {
        let stage = if reference.is_dbref() {
            let refs = format!("${}", reference.path());
            dbref_lookup::<R>(
                doc! { "id": "$_id" },
                doc! { "$in": ["$$id", dbref_ids(&refs, T::COLLECTION)] },
                into.path(),
            )
        } else {
            lookup_stage::<R>("_id", reference.path(), into.path())
        };
        self.push(stage, None).reshape()
    }

    /// A stage of one's own, sent as written (never build it from unchecked input). The
    /// documents keep their declared shape; say what they become with [`Aggregate::output`].
    pub fn stage(self, stage: Document) -> Self {
        self.push(stage, None)
    }

    /// The number of documents the pipeline yields (`{$count: "count"}` at its end; `0` when
    /// it yields none, for which the server returns no document). One `aggregate`.
    pub fn count(self) -> impl std::future::Future<Output = Result<u64>> + Send + 'a {
        let counted = self.stage(doc! { "$count": "count" }).output::<Counted>();
        async move { Ok(counted.await?.first().map_or(0, |c| c.count)) }
    }

    /// Decodes the pipeline's documents as `U` from here on (after [`Aggregate::stage`]).
    pub fn output<U>(self) -> Aggregate<'a, T, U> {
        self.reshape()
    }

    /// Documents per batch (`cursor.batchSize`, and each `getMore`'s).
    pub fn batch_size(mut self, n: u32) -> Self {
        self.options.batch_size = Some(n);
        self
    }

    /// Lets the server write temporary files for large stages (`allowDiskUse`).
    pub fn allow_disk_use(mut self, allow: bool) -> Self {
        self.options.allow_disk_use = Some(allow);
        self
    }

    /// Variables the pipeline's expressions read as `$$name` (`let`): values, never
    /// operators of the pipeline.
    pub fn let_vars(mut self, vars: bson::Document) -> Self {
        self.options.let_vars = Some(vars);
        self
    }

    /// Runs inside the caller's session (and its transaction, if one is started).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The pipeline as it will be sent.
    pub fn pipeline(&self) -> Vec<Document> {
        let mut stages = self.stages.clone();
        if let Some(kind) = T::entry().kind {
            match stages
                .first_mut()
                .and_then(|s| s.get_document_mut("$match").ok())
            {
                Some(filter) => *filter = kind.restrict(std::mem::take(filter)),
                None => stages.insert(0, doc! { "$match": kind.filter() }),
            }
        }
        stages
    }
}

/// What `{$count: "count"}` yields.
#[derive(serde::Deserialize)]
struct Counted {
    count: u64,
}

/// `{$lookup: {from: R's collection, localField, foreignField, as}}`, with a sub-pipeline
/// matching `R`'s discriminator when `R` is a kind sharing its collection.
fn lookup_stage<R: Model>(local: &str, foreign: &str, into: &str) -> Document {
    let mut lookup = doc! {
        "from": R::COLLECTION,
        "localField": local,
        "foreignField": foreign,
        "as": into,
    };
    if let Some(kind) = R::entry().kind {
        lookup.insert("pipeline", vec![doc! { "$match": kind.filter() }]);
    }
    doc! { "$lookup": lookup }
}

/// `{$lookup: {from: R's collection, let, pipeline: [{$match: {$expr: matched}}, kind], as}}`:
/// a join that `localField` cannot express (DBRefs).
fn dbref_lookup<R: Model>(variables: Document, matched: Document, into: &str) -> Document {
    let mut pipeline = vec![doc! { "$match": { "$expr": matched } }];
    if let Some(kind) = R::entry().kind {
        pipeline.push(doc! { "$match": kind.filter() });
    }
    doc! { "$lookup": {
        "from": R::COLLECTION,
        "let": variables,
        "pipeline": pipeline,
        "as": into,
    } }
}

/// The `$id`s of the DBRefs in `refs` (one DBRef or an array of them; `null` or missing is
/// none) whose `$ref` is `collection`. `$getField` with a `$literal` name, since a field path
/// cannot name `$id`.
fn dbref_ids(refs: &str, collection: &str) -> Document {
    let field =
        |name: &str, of: &str| doc! { "$getField": { "field": { "$literal": name }, "input": of } };
    doc! { "$map": {
        "input": { "$filter": {
            "input": { "$cond": [{ "$isArray": refs }, refs, [refs]] },
            "as": "r",
            "cond": { "$eq": [field("$ref", "$$r"), { "$literal": collection }] },
        } },
        "as": "r",
        "in": field("$id", "$$r"),
    } }
}

impl<'a, T: Model, C: DeserializeOwned + Send + 'a> Aggregate<'a, T, C> {
    async fn run(self) -> Result<Vec<C>> {
        let pipeline = self.pipeline();
        if let Some(e) = self.error {
            return Err(e.into_error(T::COLLECTION));
        }
        let coll = self.odm.raw_collection::<T>();
        let action = coll.aggregate(pipeline).with_options(self.options);
        // The results are views, not documents of `T`: no discriminator to check.
        let from = Reading {
            kinds: None,
            ..Reading::of::<T>(self.odm)
        };
        crate::engine::decoded!(action, self.session, &from, T)
    }
}

impl<'a, T: Model, C: DeserializeOwned + Send + 'a> std::future::IntoFuture
    for Aggregate<'a, T, C>
{
    type Output = Result<Vec<C>>;
    type IntoFuture =
        std::pin::Pin<Box<dyn std::future::Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

crate::engine::read_options!(Aggregate<C>, options);
