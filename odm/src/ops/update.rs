//! Updating documents: `update_one`, `update_many`, `update_by_id` and `update_document`.

use bson::Bson;
use mongodb::options::WriteConcern;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::encode::checked_update;
use super::into_future;
use super::UpdateFuture;
use crate::engine::write::UpdateSending;
use crate::engine::{Sending, UpdateCall};
use crate::error::Shown;
use crate::query::Filter;
use crate::transaction::TransactionMode;
use crate::update::Update;
use crate::{Model, Odm, Result};

/// Builder returned by [`Odm::update_one`], [`Odm::update_many`] and [`Odm::update_by_id`].
/// Sends one `update`; resolves to the driver's `UpdateResult` (matched, modified, upserted id).
///
/// Bounded arrays: a whole array (or a `$each`) longer than its bound is refused before anything
/// is sent; a push is guarded in the filter, and one `aggregate` tells "full" from "not found"
/// when nothing matched. `update_many` with a push first counts the documents with room and the
/// full ones (two `aggregate`s) and refuses the whole update if any is full; documents that fill
/// up after the count are not grown and make it return [`Error::BoundExceeded`](crate::Error::BoundExceeded) with their
/// number, the others updated. A refused write is an [`Error::Write`](crate::Error::Write) naming the filter.
///
/// Denormalized copies add commands (none when the model holds no copy and none is taken from
/// it):
/// - an update writing whole summaries or the reference a copy follows: one `find` per source
///   collection before the `update`, and the same `find` after it (outside a session; inside
///   one, a claiming `update` per source collection before the `find` instead);
/// - an update of a field other models copy: see [`UpdateOp::transaction`] (the update becomes
///   a `findAndModify`, then one `update` per copy and a re-reading `find`; a copy that is
///   itself copied adds one `find` and one `update` per copy of it, level after level);
/// - an update of a source of latest-N arrays touching their reference, a copied or a sort
///   field: one `find` of the parents before, then one `aggregate` and one `update` per parent.
///   When the deployment has transactions (and outside a session), the update and all of these
///   run in one transaction, retried on write conflicts, then `commitTransaction`: the summary
///   changes with its source or neither does (unless the update also cascades to other copies;
///   then the recomputation alone is in a transaction).
///
/// Each command that names a list of ids is sent once per [chunk](crate::batch) of ids (at most
/// 8 MiB of ids, 4 MiB when an array filter repeats them, and 100,000 ids), so that none passes
/// the server's 16 MB limit. A source value a copy's type cannot decode is never copied:
/// [`Error::Decode`](crate::Error::Decode) names the source, its `_id` and the field; the other
/// copies are still updated outside a transaction.
#[must_use = "the update runs when awaited"]
#[derive(Debug)]
pub struct UpdateOp<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    update: Update<T>,
    many: bool,
    upsert: bool,
    mode: TransactionMode,
    session: Option<&'a mut ClientSession>,
    /// `update_document` of a versioned model: the document's `_id` and the version it was
    /// loaded at, required in the filter.
    loaded: Option<Box<(Bson, i64)>>,
    concern: Option<Box<WriteConcern>>,
    extras: Option<Box<crate::engine::Extras>>,
}

impl<'a, T: Model> UpdateOp<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>, update: Update<T>, many: bool) -> Self {
        UpdateOp {
            odm,
            filter,
            update,
            many,
            upsert: false,
            mode: TransactionMode::Never,
            session: None,
            loaded: None,
            concern: None,
            extras: None,
        }
    }

    /// Whether an update that cascades to denormalized copies runs in a transaction. By
    /// default ([`TransactionMode::Never`](crate::TransactionMode::Never)) it does not: the
    /// cascade re-reads the sources until the copies match them, which scales to any number of
    /// copies; `Auto` runs it in one transaction when the deployment has them (falling back
    /// when it is too large for one), `Always` insists; either retries the transaction on write
    /// conflicts until [`Odm::retry_deadline`]. Without a transaction, a cascade that cannot
    /// catch up with concurrent updates by then is an [`Error::CascadeIncomplete`](crate::Error::CascadeIncomplete).
    /// See [`crate::denormalize`].
    pub fn transaction(mut self, mode: TransactionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Inserts a document built from the filter and the update when none matches. For a
    /// sharded model the filter must pin every field of the shard key with equality, or the
    /// update is refused with [`Error::ShardKeyMissing`](crate::Error::ShardKeyMissing) before anything is sent.
    pub fn upsert(mut self, yes: bool) -> Self {
        self.upsert = yes;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The update as one future: offered to the maintainers, else the plain `update`.
    fn start(mut self) -> UpdateSending<'a> {
        crate::engine::concerned!(return Sending::Boxed, self: UpdateOp.start);
        match self.call() {
            Ok(call) => crate::pipeline::update::<T>(call),
            Err(e) => Sending::failed(e),
        }
    }

    fn call(mut self) -> Result<UpdateCall<'a>> {
        super::encode::let_checked::<T>(self.odm, &self.extras)?;
        let filter = crate::engine::model_filter(self.filter)?;
        Ok(UpdateCall {
            odm: self.odm,
            shown: Shown::of(&filter),
            filter,
            array_filters: self.update.array_filters(),
            guards: self.update.take_guards(),
            update: checked_update(T::COLLECTION, self.update)?,
            many: self.many,
            upsert: self.upsert,
            mode: self.mode,
            loaded: self.loaded,
            session: self.session,
            extras: self.extras,
        })
    }
}

crate::engine::write_options!(UpdateOp, bypass, let);

into_future!(UpdateOp => UpdateResult, "update", |r: &UpdateResult| Some(r.modified_count), start -> UpdateFuture<'a>);

impl Odm {
    /// Updates one loaded document: `update` by its `_id` (and for a sharded model its shard
    /// key values, as [`Odm::delete_document`]), otherwise as [`Odm::update_by_id`]: same
    /// commands.
    ///
    /// For a versioned model (`#[odm(version)]`) the filter also requires the version `doc` was
    /// loaded at, and the update increments it: when the stored document is at another
    /// version, nothing is written and, after one more `find` (of the stored version), the
    /// result is [`Error::VersionConflict`](crate::Error::VersionConflict). The caller's `doc` is not changed: load the
    /// document again to write it again.
    pub fn update_document<'a, T: Model>(&'a self, doc: &T, update: Update<T>) -> UpdateOp<'a, T> {
        let filter = self.document_filter(doc);
        let mut op = UpdateOp::new(self, filter, update, false);
        if let (Some(id), Some(v)) = (doc.document_id(), doc.document_version()) {
            op.loaded = Some(Box::new((
                crate::path::encode_value(id).unwrap_or(Bson::Null),
                v,
            )));
        }
        op
    }
}
