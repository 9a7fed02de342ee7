//! Replacing a loaded document (`replace_one`, the save of a loaded document).

use bson::{Bson, Document, RawDocumentBuf};
use mongodb::options::ReplaceOptions;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::encode::encode_document;
use super::into_future;
use crate::{Error, Model, Odm, Result};

/// Builder returned by [`Odm::replace_one`]. Sends one `update` (a replacement, by `_id`; for
/// a sharded model by `_id` and the replacement's shard key values, so that it is routed to one
/// shard: a replacement that changes the key matches nothing).
///
/// When the model holds copies of other models, they are taken from their sources first, as on
/// insert (one `find` per source collection, and one more after the write outside a session;
/// inside one, a claiming `update` per source collection before the `find`);
/// its latest-N arrays are recomputed after it (one `aggregate`, one `update`; in one
/// transaction with the replacement, then `commitTransaction`, when nothing else copies from
/// the model, it holds no copies and the deployment has transactions).
/// When other models copy from this one, the replacement is one `findAndModify` returning the
/// copied fields as they were, followed by one `update` per copy whose fields changed (and, outside
/// a session, one `find` re-reading this document).
///
/// A model with `#[odm(created_at)]` keeps the stored value: when the struct holds another,
/// the replacement matches nothing, one `find` reads the stored value, and the replacement is
/// sent again with it (see [`crate::versioning`]).
#[must_use = "the replace runs when awaited"]
#[derive(Debug)]
pub struct Replace<'a, T> {
    odm: &'a Odm,
    doc: &'a T,
    upsert: bool,
    session: Option<&'a mut ClientSession>,
}

impl<'a, T: Model> Replace<'a, T> {
    pub(crate) fn new(odm: &'a Odm, doc: &'a T) -> Self {
        Replace {
            odm,
            doc,
            upsert: false,
            session: None,
        }
    }

    /// Inserts the document when no document has its id.
    pub fn upsert(mut self, yes: bool) -> Self {
        self.upsert = yes;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<UpdateResult> {
        if self.session.is_none() && Self::latest_in_transaction(self.odm).await? {
            // The replacement and the recomputation of the latest-N arrays it may change, in
            // one transaction retried on write conflicts: the same commands, then the commit.
            let upsert = self.upsert;
            let run = crate::retry::in_transaction(self.odm, self.doc, |odm, session, doc| {
                let attempt = Replace {
                    odm,
                    doc,
                    upsert,
                    session: Some(session),
                };
                Box::pin(attempt.write_keeping_created_at())
            });
            return Box::pin(run).await;
        }
        self.write_keeping_created_at().await
    }

    /// The replacement; when it missed because the struct's `created_at` is not the stored
    /// one, once more with the stored one (which a replacement never changes).
    async fn write_keeping_created_at(mut self) -> Result<UpdateResult> {
        let mut keep = None;
        loop {
            // A second attempt (with `keep`) never asks for a third.
            match self.write(keep.take()).await? {
                Written::Done(result) => return Ok(result),
                Written::Again(kept) => keep = Some(kept),
            }
        }
    }

    /// Whether a replacement changes latest-N arrays and nothing else the ODM maintains (this
    /// model holds no copies, and none but latest-N arrays copies from it), on a deployment
    /// with transactions.
    async fn latest_in_transaction(odm: &Odm) -> Result<bool> {
        use crate::denormalize::CopyKind;
        let from = odm.catalog().copies_from(T::COLLECTION);
        if from.is_empty()
            || !odm.catalog().copies_into(T::COLLECTION).is_empty()
            || !from
                .iter()
                .all(|c| matches!(c.kind, CopyKind::Latest { .. }))
        {
            return Ok(false);
        }
        odm.supports_transactions().await
    }

    /// The filter and the document of the replacement: the document by its `_id` (and its
    /// shard key values), at the version it was loaded at, a tree's node at its stored place.
    #[allow(clippy::type_complexity)]
    fn prepared(
        &self,
        keep: Option<Bson>,
    ) -> Result<(
        Document,
        RawDocumentBuf,
        crate::versioning::Replacing,
        Option<(crate::schema::TreeInfo, RawDocumentBuf)>,
    )> {
        let id = self.doc.document_id().ok_or_else(|| Error::MissingId {
            collection: T::COLLECTION.to_owned(),
        })?;
        let mut filter = crate::engine::model_filter(T::id_field().eq(id))?;
        let (mut raw, _) = encode_document(self.doc)?;
        // Routed on a sharded cluster: the filter names the document's shard key.
        if let Some(key) = T::SHARD_KEY {
            crate::shard::pin_key(&mut filter, &raw, &key);
        }
        // A versioned document is written only over the version it was loaded at.
        let replacing = crate::versioning::stamp_replace(self.doc, &mut filter, &mut raw, keep)?;
        // A tree's node keeps its place: the replacement's parent and ancestors must be the
        // stored ones.
        let tree = match T::TREE {
            Some(tree) => {
                crate::tree::guard_replace(T::COLLECTION, tree, &mut filter, &raw, self.upsert)?;
                Some((tree, raw.clone()))
            }
            None => None,
        };
        Ok((filter, raw, replacing, tree))
    }

    /// What follows a landed replacement: a tree's node that matched nothing is told from a
    /// moved one (`tree` given only then), the latest-N arrays are recomputed, and the copies
    /// taken are settled outside a session.
    async fn follow_ups(
        &mut self,
        tree: Option<(crate::schema::TreeInfo, RawDocumentBuf)>,
        id: &Bson,
        latest: crate::denormalize::LatestRefresh,
        copies_in: &[crate::denormalize::CopyInfo],
        taken: crate::denormalize::Taken,
    ) -> Result<()> {
        let mut session = self.session.as_deref_mut();
        let in_session = session.is_some();
        if let Some((tree, given)) = &tree {
            crate::tree::replace_missed::<T>(self.odm, *tree, id, given, session.as_deref_mut())
                .await?;
        }
        latest.run(self.odm, session.as_deref_mut()).await?;
        // A latest-N array is the ODM's to write: recomputed, whatever the caller's copy held.
        for copy in copies_in
            .iter()
            .filter(|c| matches!(c.kind, crate::denormalize::CopyKind::Latest { .. }))
        {
            let refresh = crate::denormalize::refresh_latest(
                self.odm,
                copy,
                vec![id.clone()],
                session.as_deref_mut(),
            );
            crate::trace::step!("latest", copy.dependent, refresh).await?;
        }
        if !in_session {
            taken.settle(self.odm).await?;
        }
        Ok(())
    }

    async fn write(&mut self, keep: Option<Bson>) -> Result<Written> {
        let first = keep.is_none();
        let (filter, mut raw, replacing, tree) = self.prepared(keep)?;
        let mut session = self.session.as_deref_mut();
        let encode_error = |e: bson::error::Error| Error::Encode {
            collection: T::COLLECTION.to_owned(),
            what: "document".to_owned(),
            message: e.to_string(),
        };
        // The replacement's own copies are taken from their sources, as on insert.
        let copies_in = self.odm.catalog().copies_into(T::COLLECTION);
        let mut taken = crate::denormalize::Taken::default();
        if !copies_in.is_empty() {
            let mut docs = [Document::try_from(raw.as_ref()).map_err(encode_error)?];
            taken = crate::denormalize::fill_copies(
                self.odm,
                copies_in,
                T::SHARD_KEY,
                &mut docs,
                session.as_deref_mut(),
            )
            .await?;
            raw = RawDocumentBuf::try_from(&docs[0]).map_err(encode_error)?;
        }
        // Copies taken from this document follow the replacement.
        let copies_from = self
            .odm
            .catalog()
            .copies_from(T::COLLECTION)
            .iter()
            .filter(|c| !matches!(c.kind, crate::denormalize::CopyKind::Latest { .. }))
            .cloned()
            .collect::<Vec<_>>();
        let mut latest = crate::denormalize::LatestRefresh::before(
            self.odm,
            T::COLLECTION,
            &filter,
            &[""],
            session.as_deref_mut(),
        )
        .await?;
        if latest.is_active() {
            latest.add_written(&Document::try_from(raw.as_ref()).map_err(encode_error)?);
        }
        let id = crate::decode::id_of(&raw).unwrap_or(Bson::Null);
        let written = if copies_from.is_empty() {
            let coll = self.odm.raw_collection::<T>();
            let options = ReplaceOptions::builder().upsert(self.upsert).build();
            let action = coll.replace_one(filter, raw).with_options(options);
            crate::engine::send!(action, session.as_deref_mut()).map_err(|e| {
                Error::from_write(T::COLLECTION, || crate::error::show_id(Some(&id)), e)
            })
        } else {
            let replacement = Document::try_from(raw.as_ref()).map_err(encode_error)?;
            let cascade = crate::denormalize::replace_source::<T>(
                self.odm,
                filter,
                replacement,
                self.upsert,
                copies_from,
                session.as_deref_mut(),
            );
            Box::pin(cascade).await
        };
        if crate::versioning::missed(&written, self.upsert) {
            let kept = crate::versioning::check_missed_replace::<T>(
                self.odm,
                self.doc.stamps().version,
                &replacing,
                &id,
                session,
            )
            .await?;
            // A second attempt that misses (another program changed `created_at` in between)
            // matched nothing, as any replacement of a changed document.
            if let (Some(kept), true) = (kept, first) {
                return Ok(Written::Again(kept));
            }
        }
        let result = written?;
        let missed = result.matched_count == 0;
        self.follow_ups(tree.filter(|_| missed), &id, latest, copies_in, taken)
            .await?;
        Ok(Written::Done(result))
    }
}

/// What one attempt of a replacement did.
enum Written {
    Done(UpdateResult),
    /// Nothing: the struct's `created_at` is not the stored one, which it returns.
    Again(Bson),
}

into_future!(Replace => UpdateResult, "replace_one", |r: &UpdateResult| Some(r.modified_count));
