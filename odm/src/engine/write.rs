//! The plain commands of the writes: what an operation sends when no maintainer takes its call
//! (see [`super::Maintainer`]), and what a maintainer's `next` ends with. One command each.
//!
//! Each is built before it is awaited: the returned future holds the driver's own future and
//! what an error message needs, not the call, so that the box it comes in stays small (a box
//! holding the whole call and the driver's action costs more than all the rest of the write).
//! The collection is the handle's own ([`Odm::cached_collection`]); a model outside the handle's
//! catalog makes its collection inside the future instead.

use bson::{Bson, RawDocumentBuf};
use mongodb::options::{InsertManyOptions, ReplaceOptions, UpdateOptions};
use mongodb::results::UpdateResult;
use mongodb::Collection;

use super::{start, BoxFuture, DeleteCall, InsertCall, ModifyCall, ReplaceCall, UpdateCall};
use crate::error::Shown;
use crate::{Error, Model, Result};

type Coll = Collection<RawDocumentBuf>;

/// `$send::<T>(collection, call)` on the handle's collection of `T`, or on one made inside the
/// future when `T` is not one of the handle's models.
macro_rules! on_collection {
    ($send:ident::<$t:ty>($call:expr)) => {{
        let call = $call;
        let odm = call.odm;
        match odm.cached_collection::<$t>() {
            Some(coll) => $send::<$t>(coll, call),
            None => Box::pin(async move {
                let coll = odm.raw_collection::<$t>();
                $send::<$t>(&coll, call).await
            }),
        }
    }};
}

/// One `insert` (split by the driver past 100,000 documents or 48 MB). Resolves to how many
/// documents were sent.
pub(crate) fn insert<'a, T: Model>(call: InsertCall<'a, T>) -> BoxFuture<'a, Result<usize>> {
    on_collection!(insert_on::<T>(call))
}

fn insert_on<'a, T: Model>(
    coll: &'a Coll,
    call: InsertCall<'a, T>,
) -> BoxFuture<'a, Result<usize>> {
    let InsertCall {
        mut raws,
        ordered,
        session,
        ..
    } = call;
    let n = raws.len();
    let first = raws
        .first()
        .and_then(|r| r.get("_id").ok().flatten())
        .and_then(|v| Bson::try_from(v).ok());
    let target = move || match n {
        1 => crate::error::show_id(first.as_ref()),
        n => format!(
            "{n} documents from {}",
            crate::error::show_id(first.as_ref())
        ),
    };
    let fail = move |e| Error::from_write(T::COLLECTION, target, e);
    if n == 1 {
        let sent = start!(coll.insert_one(raws.pop().expect("one document")), session);
        Box::pin(async move { sent.await.map(|_| n).map_err(fail) })
    } else {
        let options = InsertManyOptions::builder().ordered(ordered).build();
        let sent = start!(coll.insert_many(raws).with_options(options), session);
        Box::pin(async move { sent.await.map(|_| n).map_err(fail) })
    }
}

/// One `update` (`multi` for `many`), with options only when they say something (an upsert,
/// array filters): the statement is then the driver's own. The filter is rewritten for the
/// update's positional paths.
pub(crate) fn update<'a, T: Model>(call: UpdateCall<'a>) -> BoxFuture<'a, Result<UpdateResult>> {
    on_collection!(update_on::<T>(call))
}

fn update_on<'a, T: Model>(
    coll: &'a Coll,
    call: UpdateCall<'a>,
) -> BoxFuture<'a, Result<UpdateResult>> {
    let UpdateCall {
        filter,
        shown,
        update,
        array_filters,
        many,
        upsert,
        session,
        ..
    } = call;
    let filter = crate::positional::filter_for_update(filter, &update);
    let options = (upsert || !array_filters.is_empty()).then(|| {
        UpdateOptions::builder()
            .upsert(upsert)
            .array_filters((!array_filters.is_empty()).then_some(array_filters))
            .build()
    });
    let action = match many {
        true => coll.update_many(filter, update),
        false => coll.update_one(filter, update),
    };
    let sent = start!(action.with_options(options), session);
    // The filter is shown only when the write fails (formatting it costs more than
    // building the whole command).
    Box::pin(async move {
        sent.await
            .map_err(|e| Error::from_write(T::COLLECTION, || shown.show(), e))
    })
}

/// One `update` replacing the document.
pub(crate) fn replace<'a, T: Model>(
    call: ReplaceCall<'a, T>,
) -> BoxFuture<'a, Result<UpdateResult>> {
    on_collection!(replace_on::<T>(call))
}

fn replace_on<'a, T: Model>(
    coll: &'a Coll,
    call: ReplaceCall<'a, T>,
) -> BoxFuture<'a, Result<UpdateResult>> {
    let ReplaceCall {
        id,
        filter,
        raw,
        upsert,
        session,
        ..
    } = call;
    let options = ReplaceOptions::builder().upsert(upsert).build();
    let sent = start!(coll.replace_one(filter, raw).with_options(options), session);
    Box::pin(async move {
        sent.await
            .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_id(Some(&id)), e))
    })
}

/// One `findAndModify`, with the filter rewritten for the update's positional paths.
pub(crate) fn modify<'a, T: Model>(
    call: ModifyCall<'a>,
) -> BoxFuture<'a, Result<Option<RawDocumentBuf>>> {
    on_collection!(modify_on::<T>(call))
}

fn modify_on<'a, T: Model>(
    coll: &'a Coll,
    call: ModifyCall<'a>,
) -> BoxFuture<'a, Result<Option<RawDocumentBuf>>> {
    let ModifyCall {
        filter,
        shown,
        update,
        options,
        session,
        ..
    } = call;
    let filter = crate::positional::filter_for_update(filter, &update);
    let action = coll
        .find_one_and_update(filter, update)
        .with_options(options);
    let sent = start!(action, session);
    Box::pin(async move {
        sent.await
            .map_err(|e| Error::from_write(T::COLLECTION, || shown.show(), e))
    })
}

/// One `delete` (`limit: 0` for `many`). Resolves to how many documents were deleted.
pub(crate) fn delete<'a, T: Model>(call: DeleteCall<'a>) -> BoxFuture<'a, Result<u64>> {
    on_collection!(delete_on::<T>(call))
}

fn delete_on<'a, T: Model>(coll: &'a Coll, call: DeleteCall<'a>) -> BoxFuture<'a, Result<u64>> {
    let DeleteCall {
        filter,
        many,
        session,
        ..
    } = call;
    // Shown only when the delete fails.
    let shown = Shown::of(&filter);
    let action = match many {
        true => coll.delete_many(filter),
        false => coll.delete_one(filter),
    };
    let sent = start!(action, session);
    Box::pin(async move {
        Ok(sent
            .await
            .map_err(|e| Error::from_write(T::COLLECTION, || shown.show(), e))?
            .deleted_count)
    })
}
