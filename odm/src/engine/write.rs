//! The plain commands of the writes: what an operation sends when no maintainer takes its call
//! (see [`super::Maintainer`]), and what a maintainer's `next` ends with. One command each.
//!
//! Each is built before it is awaited: the returned future holds the driver's own future and
//! what an error message needs, not the call, so that the box it comes in stays small (a box
//! holding the whole call and the driver's action costs more than all the rest of the write).
//! The collection is the handle's own ([`Odm::cached_collection`]); a model outside the handle's
//! catalog makes its collection inside the future instead. Updates, replacements, deletes and
//! single inserts are not even boxed: they resolve to a [`Sending`], which polls the driver's
//! future in place.

use bson::{Bson, RawDocumentBuf};
use mongodb::action;
use mongodb::options::{
    DeleteOptions, InsertManyOptions, InsertOneOptions, ReplaceOptions, UpdateOptions,
};
use mongodb::results::UpdateResult;
use mongodb::Collection;

use super::sending::{Deleted, DriverFuture, Known, Same, Sending};
use super::{start, BoxFuture, DeleteCall, InsertCall, ModifyCall, ReplaceCall, UpdateCall};
use crate::error::Shown;
use crate::{Error, Model, Odm, Result};

pub(crate) type Coll = Collection<RawDocumentBuf>;

/// The plain `update` on its way.
pub(crate) type UpdateSending<'a> =
    Sending<'a, DriverFuture<action::Update<'a>>, Same, UpdateResult>;
/// The plain replacing `update` on its way.
pub(crate) type ReplaceSending<'a> =
    Sending<'a, DriverFuture<action::ReplaceOne<'a>>, Same, UpdateResult>;
/// The plain `delete` on its way.
pub(crate) type DeleteSending<'a> = Sending<'a, DriverFuture<action::Delete<'a>>, Deleted, u64>;
/// The plain `insert` of one document on its way, resolving to its id.
pub(crate) type InsertOneSending<'a, I> =
    Sending<'a, DriverFuture<action::InsertOne<'a>>, Known<I>, I>;

/// `$send::<T>(collection, call)` on the handle's collection of `T` (`$coll`, looked up by the
/// caller), or on one made inside the future when `T` is not one of the handle's models.
macro_rules! on_collection {
    ($send:ident::<$t:ty>($call:expr, $coll:expr)) => {{
        let call = $call;
        let odm = call.odm;
        match $coll {
            Some(coll) => $send::<$t>(coll, call).into(),
            None => {
                let made: BoxFuture<'_, Result<_>> = Box::pin(async move {
                    let coll = odm.raw_collection::<$t>();
                    $send::<$t>(&coll, call).await
                });
                made.into()
            }
        }
    }};
}

/// One `insert` of one document already encoded (`raw`, whose id is `id`), resolving to `id`.
pub(crate) fn insert_one<'a, T: Model>(
    odm: &'a Odm,
    raw: RawDocumentBuf,
    id: T::Id,
    session: Option<&'a mut mongodb::ClientSession>,
    coll: Option<&'a Coll>,
) -> InsertOneSending<'a, T::Id> {
    match coll {
        Some(coll) => insert_one_on::<T>(coll, raw, id, session),
        None => Sending::Boxed(Box::pin(async move {
            let coll = odm.raw_collection::<T>();
            insert_one_on::<T>(&coll, raw, id, session).await
        })),
    }
}

fn insert_one_on<'a, T: Model>(
    coll: &'a Coll,
    raw: RawDocumentBuf,
    id: T::Id,
    session: Option<&'a mut mongodb::ClientSession>,
) -> InsertOneSending<'a, T::Id> {
    // As stored: the id field's own serde attributes may write it otherwise than its type alone
    // would.
    let shown = Shown::id(&crate::decode::id_of(&raw).unwrap_or(Bson::Null));
    let driver = start!(coll.insert_one(raw), session);
    Sending::plain_document(driver, Known(id), T::COLLECTION, shown)
}

/// One `insert` of `doc`, which the driver serializes itself on the handle's typed collection
/// (a model odm sends as serde writes it, see `ops::encode::as_serialized`): one serialization,
/// as the driver's own `insert_one` of the struct. Resolves to `id`.
pub(crate) fn insert_typed<'a, T: Model>(
    coll: &'a Collection<T>,
    doc: &'a T,
    id: T::Id,
    session: Option<&'a mut mongodb::ClientSession>,
) -> InsertOneSending<'a, T::Id> {
    let shown = id_shown(&id);
    let driver = start!(coll.insert_one(doc), session);
    Sending::plain_document(driver, Known(id), T::COLLECTION, shown)
}

/// One `update` replacing the document by `doc`, which the driver serializes itself (as
/// [`insert_typed`]); `filter` selects it by `id`.
pub(crate) fn replace_typed<'a, T: Model>(
    coll: &'a Collection<T>,
    filter: bson::Document,
    doc: &'a T,
    id: &T::Id,
    upsert: bool,
    session: Option<&'a mut mongodb::ClientSession>,
) -> ReplaceSending<'a> {
    let options = ReplaceOptions::builder().upsert(upsert).build();
    let action = coll.replace_one(filter, doc).with_options(options);
    Sending::plain_document(start!(action, session), Same, T::COLLECTION, id_shown(id))
}

/// How a failed write names the document whose id is `id`.
fn id_shown<I: serde::Serialize + 'static>(id: &I) -> Shown {
    Shown::id(&crate::path::encode_value(id).unwrap_or(Bson::Null))
}

/// One `insert` (split by the driver past 100,000 documents or 48 MB). Resolves to how many
/// documents were sent.
pub(crate) fn insert<'a, T: Model>(
    call: InsertCall<'a, T>,
    coll: Option<&'a Coll>,
) -> BoxFuture<'a, Result<usize>> {
    on_collection!(insert_on::<T>(call, coll))
}

fn insert_on<'a, T: Model>(
    coll: &'a Coll,
    call: InsertCall<'a, T>,
) -> BoxFuture<'a, Result<usize>> {
    let InsertCall {
        mut raws,
        ordered,
        session,
        extras,
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
        let action = coll.insert_one(raws.pop().expect("one document"));
        let action = match extras {
            Some(e) => action.with_options(
                InsertOneOptions::builder()
                    .comment(e.comment)
                    .bypass_document_validation(e.bypass_document_validation)
                    .build(),
            ),
            None => action,
        };
        let sent = start!(action, session);
        Box::pin(async move { sent.await.map(|_| n).map_err(fail) })
    } else {
        let mut options = InsertManyOptions::builder().ordered(ordered).build();
        if let Some(e) = extras {
            options.comment = e.comment;
            options.bypass_document_validation = e.bypass_document_validation;
        }
        let sent = start!(coll.insert_many(raws).with_options(options), session);
        Box::pin(async move { sent.await.map(|_| n).map_err(fail) })
    }
}

/// One `update` (`multi` for `many`), with options only when they say something (an upsert,
/// array filters): the statement is then the driver's own. The filter is rewritten for the
/// update's positional paths.
pub(crate) fn update<'a, T: Model>(
    call: UpdateCall<'a>,
    coll: Option<&'a Coll>,
) -> UpdateSending<'a> {
    on_collection!(update_on::<T>(call, coll))
}

fn update_on<'a, T: Model>(coll: &'a Coll, call: UpdateCall<'a>) -> UpdateSending<'a> {
    let UpdateCall {
        filter,
        shown,
        update,
        array_filters,
        many,
        upsert,
        session,
        extras,
        ..
    } = call;
    let filter = crate::positional::filter_for_update(filter, &update);
    let options = (upsert || !array_filters.is_empty() || extras.is_some()).then(|| {
        let mut options = UpdateOptions::builder()
            .upsert(upsert)
            .array_filters((!array_filters.is_empty()).then_some(array_filters))
            .build();
        if let Some(e) = extras {
            options.comment = e.comment;
            options.bypass_document_validation = e.bypass_document_validation;
            options.let_vars = e.let_vars;
        }
        options
    });
    let action = match many {
        true => coll.update_many(filter, update),
        false => coll.update_one(filter, update),
    };
    let action = match options {
        Some(options) => action.with_options(options),
        None => action,
    };
    // The filter is shown only when the write fails (formatting it costs more than
    // building the whole command).
    Sending::plain(start!(action, session), Same, T::COLLECTION, shown)
}

/// One `update` replacing the document.
pub(crate) fn replace<'a, T: Model>(
    call: ReplaceCall<'a, T>,
    coll: Option<&'a Coll>,
) -> ReplaceSending<'a> {
    on_collection!(replace_on::<T>(call, coll))
}

fn replace_on<'a, T: Model>(coll: &'a Coll, call: ReplaceCall<'a, T>) -> ReplaceSending<'a> {
    let ReplaceCall {
        id,
        filter,
        raw,
        upsert,
        session,
        extras,
        ..
    } = call;
    // `upsert` is always said (`upsert: false` too), as odm's replacements always have.
    let mut options = ReplaceOptions::builder().upsert(upsert).build();
    if let Some(e) = extras {
        options.comment = e.comment;
        options.bypass_document_validation = e.bypass_document_validation;
        options.let_vars = e.let_vars;
    }
    let action = coll.replace_one(filter, raw).with_options(options);
    Sending::plain_document(start!(action, session), Same, T::COLLECTION, Shown::id(&id))
}

/// One `findAndModify`, with the filter rewritten for the update's positional paths.
pub(crate) fn modify<'a, T: Model>(
    call: ModifyCall<'a>,
    coll: Option<&'a Coll>,
) -> BoxFuture<'a, Result<Option<RawDocumentBuf>>> {
    on_collection!(modify_on::<T>(call, coll))
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
pub(crate) fn delete<'a, T: Model>(
    call: DeleteCall<'a>,
    coll: Option<&'a Coll>,
) -> DeleteSending<'a> {
    on_collection!(delete_on::<T>(call, coll))
}

fn delete_on<'a, T: Model>(coll: &'a Coll, call: DeleteCall<'a>) -> DeleteSending<'a> {
    let DeleteCall {
        filter,
        many,
        session,
        extras,
        ..
    } = call;
    // Shown only when the delete fails.
    let shown = Shown::of(&filter);
    let action = match many {
        true => coll.delete_many(filter),
        false => coll.delete_one(filter),
    };
    let action = match extras {
        Some(e) => action.with_options(
            DeleteOptions::builder()
                .comment(e.comment)
                .let_vars(e.let_vars)
                .build(),
        ),
        None => action,
    };
    Sending::plain(start!(action, session), Deleted, T::COLLECTION, shown)
}
