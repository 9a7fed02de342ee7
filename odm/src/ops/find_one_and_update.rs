//! `find_one_and_update`: one document updated and returned, with the copies it writes.

use mongodb::options::{FindOneAndUpdateOptions, ReturnDocument, WriteConcern};
use mongodb::ClientSession;

use super::encode::checked_update;
use super::into_future;
use crate::decode::decode;
use crate::engine::ModifyCall;
use crate::query::{Filter, Sort};
use crate::update::Update;
use crate::{Model, Odm, Result};

/// Builder returned by [`Odm::find_one_and_update`]. Sends one `findAndModify`.
///
/// Like [`Odm::update_one`], it keeps denormalized copies in step: an update that writes
/// whole summaries or the reference a copy follows first reads their sources (one `find` per
/// source collection, and one more after the write outside a session); an update of fields
/// other models copy is followed by one `update` per copy (plus one `find` reading the new
/// values unless [`return_new`](Self::return_new) is set, and outside a session one `find`
/// re-reading the document). An update of a source of latest-N arrays touching their reference,
/// a copied or a sort field adds one `find` of the parents before, and one `aggregate` and one
/// `update` per parent after.
#[must_use = "the update runs when awaited"]
pub struct FindOneAndUpdate<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    update: Update<T>,
    options: FindOneAndUpdateOptions,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
}

impl<T> std::fmt::Debug for FindOneAndUpdate<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FindOneAndUpdate")
            .field("filter", &self.filter)
            .field("update", &self.update)
            .finish()
    }
}

impl<'a, T: Model> FindOneAndUpdate<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>, update: Update<T>) -> Self {
        FindOneAndUpdate {
            odm,
            filter,
            update,
            options: FindOneAndUpdateOptions::default(),
            session: None,
            concern: None,
        }
    }

    /// Which document is taken when several match (the seed: highest priority first).
    pub fn sort(mut self, sort: Sort<T>) -> Self {
        self.options.sort = Some(sort.into_document());
        self
    }

    /// Returns the document as it is after the update (`new: true`); by default it is returned
    /// as it was before.
    pub fn return_new(mut self) -> Self {
        self.options.return_document = Some(ReturnDocument::After);
        self
    }

    /// Inserts a document when none matches.
    pub fn upsert(mut self, yes: bool) -> Self {
        self.options.upsert = Some(yes);
        self
    }

    /// Attaches `comment` to the `findAndModify` (the profiler, the server's log and
    /// `currentOp` show it); the ODM's own commands for the write carry none.
    pub fn comment(mut self, comment: impl Into<bson::Bson>) -> Self {
        self.options.comment = Some(comment.into());
        self
    }

    /// Lets the `findAndModify` store a document the collection's validator would refuse
    /// (`bypassDocumentValidation`); the ODM's own writes for it are validated as always.
    pub fn bypass_document_validation(mut self, yes: bool) -> Self {
        self.options.bypass_document_validation = Some(yes);
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(mut self) -> Result<Option<T>> {
        crate::engine::concerned!(return await, self: FindOneAndUpdate.sent);
        self.sent().await
    }

    /// The write, on this builder's handle.
    async fn sent(self) -> Result<Option<T>> {
        let filter = crate::engine::model_filter(self.filter)?;
        let guards = self.update.guards().to_vec();
        let mut options = self.options;
        let array_filters = self.update.array_filters();
        if !array_filters.is_empty() {
            options.array_filters = Some(array_filters);
        }
        let call = ModifyCall {
            odm: self.odm,
            shown: crate::error::Shown::of(&filter),
            filter,
            update: checked_update(T::COLLECTION, self.update)?,
            guards,
            options,
            session: self.session,
        };
        let found = crate::pipeline::modify::<T>(call).await?;
        found
            .map(|raw| decode(&crate::decode::Reading::of::<T>(self.odm), &raw))
            .transpose()
    }
}

crate::engine::write_options!(@concern FindOneAndUpdate);

into_future!(FindOneAndUpdate => Option<T>, "find_one_and_update", |v: &Option<T>| Some(v.is_some().into()));
