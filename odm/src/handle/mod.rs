//! The operations of the [`Odm`] handle: each returns the builder of its operation (its
//! state, constructors and settings are the engine's).

mod new;
mod soft;
mod tree;

use crate::engine::Odm;
use crate::model::Model;
use crate::ops::{
    Count, Delete, Find, FindOne, FindOneAndUpdate, InsertMany, InsertOne, Replace, UpdateOp,
};
use crate::path::Value;
use crate::populate::{Children, RefPath, SingleRef};
use crate::query::Filter;
use crate::relations::{Reassign, VerifyInverse};
use crate::update::Update;

impl Odm {
    /// Inserts one document. Sends one `insert`.
    ///
    /// The `_id` is generated client-side when the document has none (`Option` id left `None`)
    /// and its type is `ObjectId`; otherwise a missing id is an [`Error::MissingId`](crate::Error::MissingId). Keys
    /// starting with `$` or containing `.` are refused before anything is sent. A unique-index
    /// violation is an [`Error::DuplicateKey`](crate::Error::DuplicateKey) naming the index and the value.
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let book = Book { id: 1, title: "The Great Gatsby".into(), pages: 180 };
    /// odm.insert_one(&book).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert_one<'a, T: Model>(&'a self, doc: &'a T) -> InsertOne<'a, T> {
        InsertOne::new(self, doc)
    }

    /// Inserts many documents, in order. Sends one `insert` per 100,000 documents or 48 MB (the
    /// driver splits larger batches); nothing for an empty list.
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let books = [
    ///     Book { id: 1, title: "The Great Gatsby".into(), pages: 180 },
    ///     Book { id: 2, title: "Tender Is the Night".into(), pages: 317 },
    /// ];
    /// odm.insert_many(&books).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert_many<'a, T: Model>(
        &'a self,
        docs: impl IntoIterator<Item = &'a T>,
    ) -> InsertMany<'a, T> {
        InsertMany::new(self, docs.into_iter().collect())
    }

    /// Finds the documents matching `filter`. Sends one `find`, plus one `getMore` per further
    /// batch (the first batch holds 101 documents, the next ones up to 16 MB each).
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let long: Vec<Book> = odm
    ///     .find(Book::pages().gte(300))
    ///     .sort(Book::title().asc())
    ///     .limit(10)
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn find<T: Model>(&self, filter: Filter<T>) -> Find<'_, T> {
        Find::new(self, filter)
    }

    /// Finds the first document matching `filter`. Sends one `find` (with `limit: 1`).
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let gatsby: Option<Book> = odm.find_one(Book::title().eq("The Great Gatsby")).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn find_one<T: Model>(&self, filter: Filter<T>) -> FindOne<'_, T> {
        FindOne::new(self, filter)
    }

    /// Finds the document with this `_id`. Sends one `find`.
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let book: Option<Book> = odm.get::<Book>(1).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn get<T: Model>(&self, id: impl Value<T::Id>) -> FindOne<'_, T> {
        FindOne::new(self, T::id_field().eq(id))
    }

    /// The `_id` of the first document matching `filter`, projecting only `_id`: how a
    /// caller that knows a natural key finds the document to write to (the seed looks a host up
    /// by `ipaddr`). Sends one `find`.
    pub fn find_id<T: Model>(&self, filter: Filter<T>) -> crate::ops::FindId<'_, T> {
        crate::ops::FindId::new(self, filter)
    }

    /// Counts the documents matching `filter`. Sends one `aggregate` (what `countDocuments` is).
    pub fn count<T: Model>(&self, filter: Filter<T>) -> Count<'_, T> {
        Count::new(self, filter)
    }

    /// The number of documents of `T`'s collection, from its metadata rather than by reading
    /// them: one `count` without a filter, fast on any size, and possibly off after an
    /// unclean shutdown or during a chunk migration. Refused, nothing sent, for a model whose
    /// collection holds other documents too (a kind of an enum of kinds, a model with soft
    /// deletes): the estimate would count them. Not in a transaction.
    pub fn estimated_count<T: Model>(&self) -> crate::ops::EstimatedCount<'_, T> {
        crate::ops::EstimatedCount::new(self)
    }

    /// Updates the first document matching `filter`. Sends one `update`; a push onto a bounded
    /// array that matches nothing adds one `aggregate` (a count) to tell a full array from a
    /// missing document. Denormalized copies add commands: see [`UpdateOp`].
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// odm.update_one(
    ///     Book::title().eq("The Great Gatsby"),
    ///     Book::pages().set(218),
    /// )
    /// .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn update_one<T: Model>(&self, filter: Filter<T>, update: Update<T>) -> UpdateOp<'_, T> {
        UpdateOp::new(self, filter, update, false)
    }

    /// Updates every document matching `filter`. Sends one `update` (with `multi: true`); a push
    /// onto a bounded array first sends two `aggregate`s (the documents with room, the full
    /// ones), refuses the whole update if any matching document is full, and reports
    /// ([`Error::BoundExceeded`](crate::Error::BoundExceeded)) documents that filled up while it ran. Denormalized copies add
    /// commands: see [`UpdateOp`].
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// // Several changes in one update: `.and(...)`.
    /// odm.update_many(
    ///     Book::pages().lt(100),
    ///     Book::pages().set(100).and(Book::title().set("(short)".to_owned())),
    /// )
    /// .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn update_many<T: Model>(&self, filter: Filter<T>, update: Update<T>) -> UpdateOp<'_, T> {
        UpdateOp::new(self, filter, update, true)
    }

    /// Updates the document with this `_id`. Sends one `update` (denormalized copies add
    /// commands: see [`UpdateOp`]).
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// odm.update_by_id::<Book>(1, Book::pages().inc(1)).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn update_by_id<T: Model>(
        &self,
        id: impl Value<T::Id>,
        update: Update<T>,
    ) -> UpdateOp<'_, T> {
        UpdateOp::new(self, T::id_field().eq(id), update, false)
    }

    /// Replaces the stored document that has `doc`'s `_id` with `doc`. Sends one `update`
    /// (denormalized copies change this: see [`Replace`]).
    pub fn replace_one<'a, T: Model>(&'a self, doc: &'a T) -> Replace<'a, T> {
        Replace::new(self, doc)
    }

    /// Deletes the first document matching `filter`, applying the delete rules of every
    /// reference to the model. When nothing references it: one `delete`. Otherwise see
    /// [`relations`](crate::relations) for the plan (one `find` for the ids, one command per
    /// referencing field) and the transaction it runs in. A model with
    /// [soft deletes](crate::soft_delete) sends one `update` marking the document instead.
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// odm.delete_one(Book::id_field().eq(1)).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete_one<T: Model>(&self, filter: Filter<T>) -> Delete<'_, T> {
        Delete::new(self, filter, false)
    }

    /// Deletes every document matching `filter`, applying the delete rules like
    /// [`Odm::delete_one`].
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize, Debug)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// #     #[index]
    /// #     pages: i32,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// odm.delete_many(Book::pages().lt(50)).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete_many<T: Model>(&self, filter: Filter<T>) -> Delete<'_, T> {
        Delete::new(self, filter, true)
    }

    /// Atomically updates the first document matching `filter` (in `sort` order) and returns it,
    /// as it was before the update or, with `.return_new()`, after. Sends one `findAndModify`
    /// (denormalized copies add commands: see [`FindOneAndUpdate`]).
    /// This is the seed's loan queue: take the highest-priority pending request and mark it.
    pub fn find_one_and_update<T: Model>(
        &self,
        filter: Filter<T>,
        update: Update<T>,
    ) -> FindOneAndUpdate<'_, T> {
        FindOneAndUpdate::new(self, filter, update)
    }

    /// Deletes the first document matching `filter` (in the order of
    /// [`sort`](crate::ops::FindOneAndDelete::sort)) and returns it as it was: a queue's next
    /// job taken. Sends one `findAndModify`; a model with delete rules, soft deletes, copies
    /// or a tree reads it first and deletes it as [`Odm::delete_one`] does (see
    /// [`FindOneAndDelete`](crate::ops::FindOneAndDelete)).
    pub fn find_one_and_delete<T: Model>(
        &self,
        filter: Filter<T>,
    ) -> crate::ops::FindOneAndDelete<'_, T> {
        crate::ops::FindOneAndDelete::new(self, filter)
    }

    /// Replaces the document with `doc`'s `_id`, if it matches `filter`, and returns it as it
    /// was (or as it is, with `return_new`). Sends one `findAndModify`; a model that holds or
    /// gives copies, keeps versions or two-way arrays reads it first and replaces it as
    /// [`Odm::replace_one`] does (see [`FindOneAndReplace`](crate::ops::FindOneAndReplace)).
    pub fn find_one_and_replace<'a, T: Model>(
        &'a self,
        filter: Filter<T>,
        doc: &'a T,
    ) -> crate::ops::FindOneAndReplace<'a, T> {
        crate::ops::FindOneAndReplace::new(self, filter, doc)
    }

    /// The children of `parents` through the parent reference `link` (the reverse of a
    /// `#[parent]` field: `odm.children(LogMsg::host(), &hosts)`), with a per-parent sort and
    /// limit. Sends one `find`, or with `.limit_per_parent(n)` one `aggregate`, whatever the
    /// number of parents. See [`Children`](crate::populate::Children).
    pub fn children<'a, C: Model, W, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
        parents: &[P],
    ) -> Children<'a, C, P> {
        Children::new(self, link.as_ref(), parents)
    }

    /// Like [`Odm::children`], from the parents' ids rather than whole parent documents (ids
    /// the caller holds, or read with a projection); look the groups up with
    /// [`ChildrenOf::of_id`](crate::populate::ChildrenOf::of_id). Sends the same commands.
    pub fn children_of_ids<'a, C: Model, W, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
        ids: impl IntoIterator<Item = impl Value<P::Id>>,
    ) -> Children<'a, C, P> {
        Children::of_ids(self, link.as_ref(), ids)
    }

    /// Moves `child` to the parent `to` through the two-way reference `link` (the child's side,
    /// e.g. `Task::owner()`), updating both sides. See [`Reassign`] for the transaction, the
    /// fixed order without one, and the commands sent.
    pub fn reassign<'a, C: Model, W: SingleRef<P>, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
        child: impl Value<C::Id>,
        to: impl Value<P::Id>,
    ) -> Reassign<'a, C, P> {
        Reassign::new(self, link.as_ref(), child, to)
    }

    /// Checks (and with `.repair(true)` fixes) that every parent's array lists exactly the
    /// children whose reference `link` names it. See [`VerifyInverse`] for the commands.
    pub fn verify_inverse<'a, C: Model, W: SingleRef<P>, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
    ) -> VerifyInverse<'a, C, P> {
        VerifyInverse::new(self, link.as_ref())
    }

    /// Finds (and with `.repair(true)` fixes) every denormalized copy that differs from its
    /// source. See [`VerifyCopies`](crate::denormalize::VerifyCopies) for the commands.
    pub fn verify_copies(&self) -> crate::denormalize::VerifyCopies<'_> {
        crate::denormalize::VerifyCopies::new(self)
    }
}
