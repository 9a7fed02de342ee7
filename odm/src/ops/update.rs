//! Updating documents: `update_one`, `update_many`, `update_by_id` and `update_document`.

use bson::{Bson, Document};
use mongodb::options::UpdateOptions;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::bounds::guards;
use super::encode::checked_update;
use super::into_future;
use crate::query::Filter;
use crate::update::Update;
use crate::{Error, Model, Odm, Result};

/// An update of `T` as it will be sent, with the copies it writes taken from their sources,
/// and what to do about copies once it has landed: the sources to re-read, and the latest-N
/// arrays to recompute. See [`UpdateOp`] for the commands.
pub(crate) async fn prepare_update<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: Update<T>,
    mut session: Option<&mut ClientSession>,
) -> Result<(
    Document,
    crate::denormalize::Taken,
    crate::denormalize::LatestRefresh,
)> {
    let mut update = checked_update(T::COLLECTION, update)?;
    if let Some(tree) = T::TREE {
        crate::tree::refuse_tree_writes(T::COLLECTION, tree, &update)?;
    }
    // A raw update is refused on copies too: raw is for operators, not for writing copies.
    // The follow-up work is boxed, and only built when there is some: an update of a model
    // without copies awaits a future the size of the driver's.
    let taken = if odm.catalog().copies_into(T::COLLECTION).is_empty() {
        crate::denormalize::Taken::default()
    } else {
        Box::pin(crate::denormalize::fill_update(
            odm,
            T::COLLECTION,
            crate::denormalize::Writes::of::<T>(),
            &mut update,
            true,
            session.as_deref_mut(),
        ))
        .await?
    };
    // The paths as sent, copies taken included: a latest-N array holding a copy this update
    // refills (through the reference it follows) is recomputed too.
    let mut latest = if odm.catalog().copies_from(T::COLLECTION).is_empty() {
        crate::denormalize::LatestRefresh::default()
    } else {
        Box::pin(crate::denormalize::LatestRefresh::before(
            odm,
            T::COLLECTION,
            filter,
            &crate::denormalize::written_by(&update),
            session,
        ))
        .await?
    };
    if let Ok(set) = update.get_document("$set") {
        latest.add_written(set);
    }
    Ok((update, taken, latest))
}

/// Builder returned by [`Odm::update_one`], [`Odm::update_many`] and [`Odm::update_by_id`].
/// Sends one `update`; resolves to the driver's `UpdateResult` (matched, modified, upserted id).
///
/// Bounded arrays: a whole array (or a `$each`) longer than its bound is refused before anything
/// is sent; a push is guarded in the filter, and one `aggregate` tells "full" from "not found"
/// when nothing matched. `update_many` with a push first counts the documents with room and the
/// full ones (two `aggregate`s) and refuses the whole update if any is full; documents that fill
/// up after the count are not grown and make it return [`Error::BoundExceeded`] with their
/// number, the others updated. A refused write is an [`Error::Write`] naming the filter.
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
    mode: crate::relations::TransactionMode,
    session: Option<&'a mut ClientSession>,
    /// `update_document` of a versioned model: the document's `_id` and the version it was
    /// loaded at, required in the filter.
    loaded: Option<(Bson, i64)>,
}

impl<'a, T: Model> UpdateOp<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>, update: Update<T>, many: bool) -> Self {
        UpdateOp {
            odm,
            filter,
            update,
            many,
            upsert: false,
            mode: crate::relations::TransactionMode::Never,
            session: None,
            loaded: None,
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
    pub fn transaction(mut self, mode: crate::relations::TransactionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Inserts a document built from the filter and the update when none matches. For a
    /// sharded model the filter must pin every field of the shard key with equality, or the
    /// update is refused with [`Error::ShardKeyMissing`] before anything is sent.
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
        let odm = self.odm;
        if self.session.is_none() && self.latest_in_transaction().await? {
            return Box::pin(self.run_with_latest()).await;
        }
        let in_session = self.session.is_some();
        let (result, taken, short) = self.write().await?;
        if !in_session && !taken.is_empty() {
            Box::pin(taken.settle(odm)).await?;
        }
        match short {
            Some(full) => Err(full),
            None => Ok(result),
        }
    }

    /// Whether this update changes latest-N arrays and nothing else the ODM maintains, on a
    /// deployment with transactions: then the write and the recomputation of the arrays run in
    /// one transaction ([`Self::run_with_latest`]). A source field nobody copies, or a model no
    /// latest-N array summarizes, answers at the first lookup.
    async fn latest_in_transaction(&self) -> Result<bool> {
        use crate::denormalize::{latest_touched, touched_by, written_by};
        let catalog = self.odm.catalog();
        if catalog.copies_from(T::COLLECTION).is_empty()
            || !catalog.copies_into(T::COLLECTION).is_empty()
        {
            return Ok(false);
        }
        let update = self.update.as_document();
        if latest_touched(catalog, T::COLLECTION, &written_by(update)).is_empty()
            || !touched_by(catalog, T::COLLECTION, T::KIND, update).is_empty()
        {
            return Ok(false);
        }
        // What is refused before anything is sent stays so: no `hello` first.
        let base = crate::engine::model_filter(self.filter.clone())?;
        if let (true, Some(key)) = (self.upsert, T::SHARD_KEY) {
            crate::shard::check_upsert(T::COLLECTION, &base, &key, "upsert")?;
        }
        self.odm.supports_transactions().await
    }

    /// The update and the recomputation of the latest-N arrays it changes, in one transaction
    /// the ODM opens and retries on write conflicts: the summary changes with the source, or
    /// neither does. The same commands as outside a transaction, then `commitTransaction`.
    async fn run_with_latest(self) -> Result<UpdateResult> {
        let op = (
            self.filter,
            self.update,
            self.many,
            self.upsert,
            self.mode,
            self.loaded,
        );
        let (result, short) = crate::retry::in_transaction(self.odm, &op, |odm, session, op| {
            let (filter, update, many, upsert, mode, loaded) = op;
            let attempt = UpdateOp {
                odm,
                filter: filter.clone(),
                update: update.clone(),
                many: *many,
                upsert: *upsert,
                mode: *mode,
                session: Some(session),
                loaded: loaded.clone(),
            };
            Box::pin(async move {
                // Nothing is taken: the model holds no copies.
                let (result, _, short) = attempt.write().await?;
                Ok((result, short))
            })
        })
        .await?;
        match short {
            Some(full) => Err(full),
            None => Ok(result),
        }
    }

    /// The result, the copies to settle, and for a bounded `update_many` whose write matched
    /// fewer documents than had room when counted, the error saying so.
    async fn write(self) -> Result<(UpdateResult, crate::denormalize::Taken, Option<Error>)> {
        let mut base = crate::engine::model_filter(self.filter)?;
        crate::versioning::expect_version::<T>(&mut base, self.loaded.as_ref().map(|l| l.1));
        // The server could not tell which shard a new document belongs to.
        if let (true, Some(key)) = (self.upsert, T::SHARD_KEY) {
            crate::shard::check_upsert(T::COLLECTION, &base, &key, "upsert")?;
        }
        let guards =
            super::bounds::guards_for::<T>(self.update.as_document(), self.update.guards())?;
        let mut session = self.session;
        let array_filters = self.update.array_filters();
        let (mut update, taken, latest) =
            prepare_update(self.odm, &base, self.update, session.as_deref_mut()).await?;
        crate::versioning::stamp_update::<T>(&mut update, self.upsert)?;
        // After the copies are taken: a copy the update refills is cascaded to its own copies.
        let touched =
            crate::denormalize::touched_by(self.odm.catalog(), T::COLLECTION, T::KIND, &update);
        // The cascade re-sends the update in commands of its own, without array filters. No
        // copy is taken from below an array today, so this is a guard, not a path taken.
        if !touched.is_empty() && !array_filters.is_empty() {
            return Err(Error::Unsupported(format!(
                "this update of `{}` writes fields other models copy through filtered element paths (`$[e0]`), which the cascade does not follow; update those elements with `matched()` or `each()`",
                T::COLLECTION
            )));
        }
        let filter =
            crate::positional::filter_for_update(guards::guarded(base.clone(), &guards), &update);
        let mut with_room = None;
        if self.many && !guards.is_empty() {
            // Count the documents with room, then refuse the whole update, before writing, if
            // any is full: one that fills up after the count is found full by the check, one
            // that fills up after the check is missing from the update's matches: reported.
            with_room = Some(
                Box::pin(guards::count::<T>(
                    self.odm,
                    filter.clone(),
                    session.as_deref_mut(),
                ))
                .await?,
            );
            Box::pin(guards::refuse_full::<T>(
                self.odm,
                &base,
                &guards,
                session.as_deref_mut(),
            ))
            .await?;
        }
        let written = if !touched.is_empty() && !self.upsert {
            let cascade = crate::denormalize::cascade_update::<T>(
                self.odm,
                filter,
                update,
                touched,
                self.many,
                self.mode,
                session.as_deref_mut(),
            );
            // The copies' writes are the step `cascade`, traced inside: the source's own
            // write belongs to the operation.
            Box::pin(cascade).await
        } else {
            send_plain::<T>(
                self.odm,
                filter,
                update,
                (self.many, self.upsert),
                array_filters,
                &base,
                session.as_deref_mut(),
            )
            .await
        };
        let missed = crate::versioning::missed(&written, self.upsert);
        if let (true, Some((id, expected))) = (missed, &self.loaded) {
            Box::pin(crate::versioning::check_conflict::<T>(
                self.odm,
                id,
                *expected,
                session.as_deref_mut(),
            ))
            .await?;
        }
        let result = written?;
        if result.matched_count == 0 && result.upserted_id.is_none() && !guards.is_empty() {
            Box::pin(guards::refuse_full::<T>(
                self.odm,
                &base,
                &guards,
                session.as_deref_mut(),
            ))
            .await?;
        }
        if latest.is_active() {
            Box::pin(latest.run(self.odm, session)).await?;
        }
        let short = with_room.and_then(|n| short_of::<T>(n, result.matched_count, &guards));
        Ok((result, taken, short))
    }
}

into_future!(UpdateOp => UpdateResult, "update", |r: &UpdateResult| Some(r.modified_count));

impl Odm {
    /// Updates one loaded document: `update` by its `_id` (and for a sharded model its shard
    /// key values, as [`Odm::delete_document`]), otherwise as [`Odm::update_by_id`]: same
    /// commands.
    ///
    /// For a versioned model (`#[odm(version)]`) the filter also requires the version `doc` was
    /// loaded at, and the update increments it: when the stored document is at another
    /// version, nothing is written and, after one more `find` (of the stored version), the
    /// result is [`Error::VersionConflict`]. The caller's `doc` is not changed: load the
    /// document again to write it again.
    pub fn update_document<'a, T: Model>(&'a self, doc: &T, update: Update<T>) -> UpdateOp<'a, T> {
        let filter = self.document_filter(doc);
        let mut op = UpdateOp::new(self, filter, update, false);
        if let (Some(id), Some(v)) = (doc.document_id(), doc.document_version()) {
            op.loaded = Some((crate::path::encode_value(id).unwrap_or(Bson::Null), v));
        }
        op
    }
}

/// The update as one command, `update_many` or `update_one` (`many`), with options only when
/// they say something (an upsert, array filters): the statement is then the driver's own.
async fn send_plain<T: Model>(
    odm: &Odm,
    filter: Document,
    update: Document,
    (many, upsert): (bool, bool),
    array_filters: Vec<Document>,
    base: &Document,
    session: Option<&mut ClientSession>,
) -> Result<UpdateResult> {
    let coll = odm.raw_collection::<T>();
    // No options unless they say something: the statement is then the driver's own.
    let options = (upsert || !array_filters.is_empty()).then(|| {
        UpdateOptions::builder()
            .upsert(upsert)
            .array_filters((!array_filters.is_empty()).then_some(array_filters))
            .build()
    });
    if many {
        let action = coll.update_many(filter, update).with_options(options);
        crate::engine::send!(action, session)
    } else {
        let action = coll.update_one(filter, update).with_options(options);
        crate::engine::send!(action, session)
    }
    // The filter is shown only when the write fails (formatting it costs more than
    // building the whole command).
    .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_filter(base), e))
}

/// The error of an `update_many` of a bounded array that updated fewer documents than had room
/// when counted (`with_room`): some filled up in between.
fn short_of<T: Model>(
    with_room: u64,
    matched: u64,
    guards: &[crate::update::Guard],
) -> Option<Error> {
    (matched < with_room).then(|| {
        let mut guard = guards[0].clone();
        guard.path = guards.iter().map(|g| g.path.as_str()).collect::<Vec<_>>().join(", ");
        let detail = format!(
            "{matched} document(s) were updated; the others changed (or stopped matching) between the count and the update"
        );
        guards::refused::<T>(&guard, with_room - matched, detail)
    })
}
