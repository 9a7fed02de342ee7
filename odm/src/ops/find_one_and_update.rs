//! `find_one_and_update`: one document updated and returned, with the copies it writes.

use bson::Document;
use mongodb::options::{FindOneAndUpdateOptions, ReturnDocument};
use mongodb::ClientSession;

use super::into_future;
use crate::decode::decode;
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
    return_new: bool,
    session: Option<&'a mut ClientSession>,
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
            return_new: false,
            session: None,
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
        self.return_new = true;
        self
    }

    /// Inserts a document when none matches.
    pub fn upsert(mut self, yes: bool) -> Self {
        self.options.upsert = Some(yes);
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<Option<T>> {
        let base = crate::engine::model_filter(self.filter)?;
        // The server could not tell which shard a new document belongs to.
        if let (Some(true), Some(key)) = (self.options.upsert, T::SHARD_KEY) {
            crate::shard::check_upsert(T::COLLECTION, &base, &key, "findAndModify upsert")?;
        }
        let guards =
            super::bounds::guards_for::<T>(self.update.as_document(), self.update.guards())?;
        let mut session = self.session;
        let in_session = session.is_some();
        let array_filters = self.update.array_filters();
        let mut options = self.options;
        if !array_filters.is_empty() {
            options.array_filters = Some(array_filters);
        }
        let (mut update, taken, latest) =
            super::update::prepare_update(self.odm, &base, self.update, session.as_deref_mut())
                .await?;
        crate::versioning::stamp_update::<T>(&mut update, options.upsert == Some(true))?;
        // After the copies are taken: a copy the update refills is cascaded to its own copies.
        let touched =
            crate::denormalize::touched_by(self.odm.catalog(), T::COLLECTION, T::KIND, &update);
        let guarded = crate::positional::filter_for_update(
            super::bounds::guards::guarded(base.clone(), &guards),
            &update,
        );
        // A background copy's intent commits with the write: both in one transaction of their
        // own (in the caller's session, its transaction holds both).
        let background = !in_session && crate::denormalize::background::any(&touched);
        let found = if background {
            crate::denormalize::background::find_and_modify_and_record::<T>(
                self.odm, guarded, update, options, &touched,
            )
            .await?
        } else {
            let coll = self.odm.raw_collection::<T>();
            let action = coll
                .find_one_and_update(guarded, update)
                .with_options(options);
            crate::engine::send!(action, session.as_deref_mut()).map_err(|e| {
                crate::Error::from_write(T::COLLECTION, || crate::error::show_filter(&base), e)
            })?
        };
        // Recorded with the write: what is left to cascade now is the other copies.
        let touched: Vec<_> = match background {
            true => touched.into_iter().filter(|c| !c.background).collect(),
            false => touched,
        };
        match &found {
            None => {
                super::bounds::guards::refuse_full::<T>(
                    self.odm,
                    &base,
                    &guards,
                    session.as_deref_mut(),
                )
                .await?;
            }
            Some(raw) if !touched.is_empty() => {
                // The copies of what this update changed follow it, from the document as
                // returned when it is the new one, else read back.
                let id = crate::decode::id_of(raw).unwrap_or(bson::Bson::Null);
                let after = match self.return_new {
                    true => Some(Document::try_from(raw.as_ref()).map_err(|e| {
                        crate::Error::Encode {
                            collection: T::COLLECTION.to_owned(),
                            what: "document".to_owned(),
                            message: e.to_string(),
                        }
                    })?),
                    false => None,
                };
                let cascade = crate::denormalize::cascade_source_write(
                    self.odm,
                    T::COLLECTION,
                    id,
                    after,
                    touched,
                    session.as_deref_mut(),
                );
                cascade.await?;
            }
            Some(_) => {}
        }
        latest.run(self.odm, session).await?;
        if !in_session {
            taken.settle(self.odm).await?;
        }
        found
            .map(|raw| decode(&crate::decode::Reading::of::<T>(self.odm), &raw))
            .transpose()
    }
}

into_future!(FindOneAndUpdate => Option<T>, "find_one_and_update", |v: &Option<T>| Some(v.is_some().into()));
