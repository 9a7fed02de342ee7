//! Copies as maintainers of the writes (see [`crate::pipeline`]): three places in the list.
//!
//! - [`LatestInTransaction`]: a write that changes latest-N arrays and nothing else the ODM
//!   maintains runs, with their recomputation, in one transaction.
//! - [`Copies`]: the copies a model holds are taken from their sources before its writes (and
//!   settled after them), and the latest-N arrays its writes change are recomputed.
//! - [`Cascade`]: a write of fields other models copy is sent with its cascade.
//!
//! Every follow-up is boxed and only built when there is some: a write of a model without
//! copies awaits a future the size of the driver's.

use bson::{Document, RawDocumentBuf};
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::source_write::{cascade_update, encode_error, modify_with_cascade, replace_source};
use super::{
    fill_copies, fill_update, latest_touched, push_latest, refresh_latest, touched_by, written_by,
    CopyKind, LatestRefresh, Taken, Writes,
};
use crate::engine::{
    BoxFuture, InsertCall, Maintainer, ModifyCall, NextInsert, NextModify, NextReplace, NextUpdate,
    ReplaceCall, Step, Stepped, UpdateCall,
};
use crate::{Error, Model, Odm, Result};

/// Whether `T` holds copies or gives them (latest-N arrays included): one lookup each.
fn holds_or_gives<T: Model>(odm: &Odm) -> bool {
    let catalog = odm.catalog();
    !catalog.copies_into(T::COLLECTION).is_empty() || !catalog.copies_from(T::COLLECTION).is_empty()
}

/// Whether the writes of `T` change latest-N arrays and nothing else of copies: some latest-N
/// array summarizes it, it holds no copy, and (for `latest_only`) nothing else copies from it.
fn latest_only<T: Model>(odm: &Odm) -> bool {
    let catalog = odm.catalog();
    let from = catalog.copies_from(T::COLLECTION);
    !from.is_empty()
        && catalog.copies_into(T::COLLECTION).is_empty()
        && from
            .iter()
            .all(|c| matches!(c.kind, CopyKind::Latest { .. }))
}

/// The call sent down the list in a transaction the ODM opens (retried on write conflicts),
/// or as it is on a deployment without transactions. For the update and the replacement,
/// whose calls both have `again`.
macro_rules! in_own_transaction {
    ($call:ident, $next:ident) => {
        Box::pin(async move {
            let odm = $call.odm;
            if !odm.supports_transactions().await? {
                return $next($call).await;
            }
            crate::transaction::in_transaction(odm, &$call, |odm, session, call| {
                $next(call.again(odm, session))
            })
            .await
        })
    };
}

/// A write changing latest-N arrays and nothing else the ODM maintains, outside a caller's
/// session, on a deployment with transactions: the write and the recomputation of the arrays
/// run in one transaction the ODM opens and retries on write conflicts, so that the summary
/// changes with its source or neither does. The same commands, then `commitTransaction`.
pub(crate) struct LatestInTransaction;

impl Maintainer for LatestInTransaction {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        model.related
    }

    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        // A source field nobody copies, or a model no latest-N array summarizes, answers at
        // the first lookup.
        let catalog = call.odm.catalog();
        if call.session.is_some()
            || catalog.copies_from(T::COLLECTION).is_empty()
            || !catalog.copies_into(T::COLLECTION).is_empty()
            || latest_touched(catalog, T::COLLECTION, &written_by(&call.update)).is_empty()
            || !touched_by(catalog, T::COLLECTION, T::entry().kind, &call.update).is_empty()
        {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(in_own_transaction!(call, next)))
    }

    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        if call.session.is_some() || !latest_only::<T>(call.odm) {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(in_own_transaction!(call, next)))
    }
}

/// The copies a model holds, taken from their sources, and the latest-N arrays its writes
/// change. Commands: see each operation's builder.
pub(crate) struct Copies;

impl Maintainer for Copies {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        model.related
    }

    /// The reads of the copies a model holds are counted, for [`audit`](super::audit).
    fn read<T: Model>(odm: &Odm, documents: usize) {
        super::record_reads(odm.catalog(), T::COLLECTION, documents);
    }

    fn insert<'a, T: Model>(
        call: InsertCall<'a, T>,
        next: NextInsert<T>,
    ) -> Stepped<'a, InsertCall<'a, T>, usize> {
        let catalog = call.odm.catalog();
        let copies_in = catalog.copies_into(T::COLLECTION);
        let latest: Vec<_> = catalog
            .copies_from(T::COLLECTION)
            .iter()
            .filter(|c| matches!(c.kind, CopyKind::Latest { .. }))
            .cloned()
            .collect();
        if copies_in.is_empty() && latest.is_empty() {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(Box::pin(async move {
            let InsertCall {
                odm,
                docs: typed,
                raws,
                ordered,
                mut session,
                extras,
            } = call;
            let in_session = session.is_some();
            let mut docs: Vec<Document> = raws
                .iter()
                .map(|r| Document::try_from(r.as_ref()).map_err(encode_error::<T>))
                .collect::<Result<_>>()?;
            let mut taken = Taken::default();
            let mut raws = raws;
            if !copies_in.is_empty() {
                // The id the driver would give a document without one, given first: its copies
                // are settled by id.
                for d in docs.iter_mut().filter(|d| !d.contains_key("_id")) {
                    let mut with_id = bson::doc! { "_id": bson::oid::ObjectId::new() };
                    with_id.extend(std::mem::take(d));
                    *d = with_id;
                }
                taken = fill_copies(
                    odm,
                    copies_in,
                    T::entry().shard_key,
                    &mut docs,
                    session.as_deref_mut(),
                )
                .await?;
                raws = docs
                    .iter()
                    .map(|d| RawDocumentBuf::try_from(d).map_err(encode_error::<T>))
                    .collect::<Result<_>>()?;
            }
            let n = next(InsertCall {
                odm,
                docs: typed,
                raws,
                ordered,
                session: session.as_deref_mut(),
                extras,
            })
            .await?;
            if !latest.is_empty() {
                let push = push_latest(odm, &latest, &docs, session);
                crate::trace::step!("latest", T::COLLECTION, push).await?;
            }
            if !in_session && !taken.is_empty() {
                taken.settle(odm).await?;
            }
            Ok(n)
        })))
    }

    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        if !holds_or_gives::<T>(call.odm) {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(update_with_copies::<T, _>(call, next)))
    }

    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        next: NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        if !holds_or_gives::<T>(call.odm) {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(update_with_copies::<T, _>(call, next)))
    }

    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        if !holds_or_gives::<T>(call.odm) {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(Box::pin(replace_with_copies(call, next))))
    }
}

/// The two calls that carry an update document (`update` and `findAndModify`), as
/// [`update_with_copies`] handles both.
trait UpdateLike<'a>: Sized + Send + 'a {
    type Output: Send;
    type Next: Send;
    /// The handle, the filter, the update, and the caller's session taken out of the call.
    fn parts(
        &mut self,
    ) -> (
        &'a Odm,
        &Document,
        &mut Document,
        Option<&'a mut ClientSession>,
    );
    /// The call sent down the list in `session`.
    fn send<'s>(
        self,
        next: Self::Next,
        session: Option<&'s mut ClientSession>,
    ) -> BoxFuture<'s, Result<Self::Output>>
    where
        'a: 's;
}

impl<'a> UpdateLike<'a> for UpdateCall<'a> {
    type Output = UpdateResult;
    type Next = NextUpdate;
    fn parts(
        &mut self,
    ) -> (
        &'a Odm,
        &Document,
        &mut Document,
        Option<&'a mut ClientSession>,
    ) {
        (
            self.odm,
            &self.filter,
            &mut self.update,
            self.session.take(),
        )
    }
    fn send<'s>(
        self,
        next: NextUpdate,
        session: Option<&'s mut ClientSession>,
    ) -> BoxFuture<'s, Result<UpdateResult>>
    where
        'a: 's,
    {
        next(self.with_session(session))
    }
}

impl<'a> UpdateLike<'a> for ModifyCall<'a> {
    type Output = Option<RawDocumentBuf>;
    type Next = NextModify;
    fn parts(
        &mut self,
    ) -> (
        &'a Odm,
        &Document,
        &mut Document,
        Option<&'a mut ClientSession>,
    ) {
        (
            self.odm,
            &self.filter,
            &mut self.update,
            self.session.take(),
        )
    }
    fn send<'s>(
        self,
        next: NextModify,
        session: Option<&'s mut ClientSession>,
    ) -> BoxFuture<'s, Result<Option<RawDocumentBuf>>>
    where
        'a: 's,
    {
        next(self.with_session(session))
    }
}

/// An update (or `findAndModify`) of a model that holds or gives copies: its copies taken
/// before it is sent, then the latest-N arrays it changed recomputed and, outside a session,
/// the copies it took settled.
fn update_with_copies<'a, T: Model, C: UpdateLike<'a>>(
    call: C,
    next: C::Next,
) -> BoxFuture<'a, Result<C::Output>> {
    Box::pin(async move {
        let mut call = call;
        let (odm, filter, update, mut session) = call.parts();
        let (taken, latest) = take_for_update::<T>(odm, filter, update, &mut session).await?;
        let result = call.send(next, session.as_deref_mut()).await?;
        after_update(odm, latest, taken, session).await?;
        Ok(result)
    })
}

/// An update's copies taken from their sources (when the model holds some) and the latest-N
/// arrays it changes, found before it is sent (one `find` of the parents).
async fn take_for_update<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: &mut Document,
    session: &mut Option<&mut ClientSession>,
) -> Result<(Taken, LatestRefresh)> {
    let catalog = odm.catalog();
    let taken = if catalog.copies_into(T::COLLECTION).is_empty() {
        Taken::default()
    } else {
        fill_update(
            odm,
            T::COLLECTION,
            Writes::of::<T>(),
            update,
            true,
            session.as_deref_mut(),
        )
        .await?
    };
    // The paths as sent, copies taken included: a latest-N array holding a copy this update
    // refills (through the reference it follows) is recomputed too.
    let mut latest = if catalog.copies_from(T::COLLECTION).is_empty() {
        LatestRefresh::default()
    } else {
        LatestRefresh::before(
            odm,
            T::COLLECTION,
            filter,
            &written_by(update),
            session.as_deref_mut(),
        )
        .await?
    };
    if let Ok(set) = update.get_document("$set") {
        latest.add_written(set);
    }
    Ok((taken, latest))
}

/// After an update landed: the latest-N arrays it changed recomputed (one `aggregate` and one
/// `update` per parent), and outside a session the copies it took settled.
async fn after_update(
    odm: &Odm,
    latest: LatestRefresh,
    taken: Taken,
    session: Option<&mut ClientSession>,
) -> Result<()> {
    let in_session = session.is_some();
    if latest.is_active() {
        latest.run(odm, session).await?;
    }
    if !in_session && !taken.is_empty() {
        taken.settle(odm).await?;
    }
    Ok(())
}

/// A replacement whose copies are taken from their sources first, as on insert, and after
/// which the latest-N arrays it changes, and its own, are recomputed.
async fn replace_with_copies<T: Model>(
    call: ReplaceCall<'_, T>,
    next: NextReplace<T>,
) -> Result<UpdateResult> {
    let mut call = call;
    let odm = call.odm;
    let mut session = call.session.take();
    let in_session = session.is_some();
    let copies_in = odm.catalog().copies_into(T::COLLECTION);
    let mut taken = Taken::default();
    if !copies_in.is_empty() {
        let mut docs = [Document::try_from(call.raw.as_ref()).map_err(encode_error::<T>)?];
        taken = fill_copies(
            odm,
            copies_in,
            T::entry().shard_key,
            &mut docs,
            session.as_deref_mut(),
        )
        .await?;
        call.raw = RawDocumentBuf::try_from(&docs[0]).map_err(encode_error::<T>)?;
    }
    let mut latest = LatestRefresh::before(
        odm,
        T::COLLECTION,
        &call.filter,
        &[""],
        session.as_deref_mut(),
    )
    .await?;
    if latest.is_active() {
        latest.add_written(&Document::try_from(call.raw.as_ref()).map_err(encode_error::<T>)?);
    }
    let id = call.id.clone();
    let result = next(call.with_session(session.as_deref_mut())).await?;
    latest.run(odm, session.as_deref_mut()).await?;
    // A latest-N array is the ODM's to write: recomputed, whatever the caller's copy held.
    for copy in copies_in
        .iter()
        .filter(|c| matches!(c.kind, CopyKind::Latest { .. }))
    {
        let refresh = refresh_latest(odm, copy, vec![id.clone()], session.as_deref_mut());
        crate::trace::step!("latest", copy.dependent, refresh).await?;
    }
    if !in_session {
        taken.settle(odm).await?;
    }
    Ok(result)
}

/// The copies of the model that other models hold: a write of copied fields is sent with its
/// cascade (see [`crate::denormalize`]).
pub(crate) struct Cascade;

impl Maintainer for Cascade {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        model.related
    }

    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        _next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        // After the copies are taken: a copy the update refills is cascaded to its own copies.
        let touched = touched_by(
            call.odm.catalog(),
            T::COLLECTION,
            T::entry().kind,
            &call.update,
        );
        if touched.is_empty() {
            return Ok(Step::Pass(call));
        }
        // The cascade re-sends the update in commands of its own, without array filters. No
        // copy is taken from below an array today, so this is a guard, not a path taken.
        if !call.array_filters.is_empty() {
            return Err(Error::Unsupported(format!(
                "this update of `{}` writes fields other models copy through filtered element paths (`$[e0]`), which the cascade does not follow; update those elements with `matched()` or `each()`",
                T::COLLECTION
            )));
        }
        if call.upsert {
            return Ok(Step::Pass(call));
        }
        let filter = crate::positional::filter_for_update(call.filter, &call.update);
        // The copies' writes are the step `cascade`, traced inside: the source's own write
        // belongs to the operation.
        Ok(Step::Sent(Box::pin(cascade_update::<T>(
            call.odm,
            filter,
            call.update,
            touched,
            call.many,
            call.mode,
            call.session,
        ))))
    }

    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        _next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        // Copies taken from this document follow the replacement.
        let copies_from = call
            .odm
            .catalog()
            .copies_from(T::COLLECTION)
            .iter()
            .filter(|c| !matches!(c.kind, CopyKind::Latest { .. }))
            .cloned()
            .collect::<Vec<_>>();
        if copies_from.is_empty() {
            return Ok(Step::Pass(call));
        }
        let replacement = Document::try_from(call.raw.as_ref()).map_err(encode_error::<T>)?;
        Ok(Step::Sent(Box::pin(replace_source::<T>(
            call.odm,
            call.filter,
            replacement,
            call.upsert,
            copies_from,
            call.session,
        ))))
    }

    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        next: NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        let touched = touched_by(
            call.odm.catalog(),
            T::COLLECTION,
            T::entry().kind,
            &call.update,
        );
        if touched.is_empty() {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(Box::pin(modify_with_cascade::<T>(
            call, touched, next,
        ))))
    }
}
