//! The plain commands of the writes: what an operation sends when no maintainer takes its call
//! (see [`super::Maintainer`]), and what a maintainer's `next` ends with. One command each.

use bson::{Bson, RawDocumentBuf};
use mongodb::options::{InsertManyOptions, ReplaceOptions, UpdateOptions};
use mongodb::results::UpdateResult;

use super::{send, DeleteCall, InsertCall, ModifyCall, ReplaceCall, UpdateCall};
use crate::{Error, Model, Result};

/// One `insert` (split by the driver past 100,000 documents or 48 MB). Returns how many
/// documents were sent.
pub(crate) async fn insert<T: Model>(call: InsertCall<'_, T>) -> Result<usize> {
    let InsertCall {
        odm,
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
    let target = || match n {
        1 => crate::error::show_id(first.as_ref()),
        n => format!(
            "{n} documents from {}",
            crate::error::show_id(first.as_ref())
        ),
    };
    let coll = odm.raw_collection::<T>();
    if n == 1 {
        let action = coll.insert_one(raws.pop().expect("one document"));
        send!(action, session).map(|_| ())
    } else {
        let options = InsertManyOptions::builder().ordered(ordered).build();
        let action = coll.insert_many(raws).with_options(options);
        send!(action, session).map(|_| ())
    }
    .map_err(|e| Error::from_write(T::COLLECTION, target, e))?;
    Ok(n)
}

/// One `update` (`multi` for `many`), with options only when they say something (an upsert,
/// array filters): the statement is then the driver's own. The filter is rewritten for the
/// update's positional paths.
pub(crate) async fn update<T: Model>(call: UpdateCall<'_>) -> Result<UpdateResult> {
    let UpdateCall {
        odm,
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
    let coll = odm.raw_collection::<T>();
    let options = (upsert || !array_filters.is_empty()).then(|| {
        UpdateOptions::builder()
            .upsert(upsert)
            .array_filters((!array_filters.is_empty()).then_some(array_filters))
            .build()
    });
    if many {
        let action = coll.update_many(filter, update).with_options(options);
        send!(action, session)
    } else {
        let action = coll.update_one(filter, update).with_options(options);
        send!(action, session)
    }
    // The filter is shown only when the write fails (formatting it costs more than
    // building the whole command).
    .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_filter(&shown), e))
}

/// One `update` replacing the document.
pub(crate) async fn replace<T: Model>(call: ReplaceCall<'_, T>) -> Result<UpdateResult> {
    let ReplaceCall {
        odm,
        id,
        filter,
        raw,
        upsert,
        session,
        ..
    } = call;
    let coll = odm.raw_collection::<T>();
    let options = ReplaceOptions::builder().upsert(upsert).build();
    let action = coll.replace_one(filter, raw).with_options(options);
    send!(action, session)
        .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_id(Some(&id)), e))
}

/// One `findAndModify`, with the filter rewritten for the update's positional paths.
pub(crate) async fn modify<T: Model>(call: ModifyCall<'_>) -> Result<Option<RawDocumentBuf>> {
    let ModifyCall {
        odm,
        filter,
        shown,
        update,
        options,
        session,
        ..
    } = call;
    let filter = crate::positional::filter_for_update(filter, &update);
    let coll = odm.raw_collection::<T>();
    let action = coll
        .find_one_and_update(filter, update)
        .with_options(options);
    send!(action, session)
        .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_filter(&shown), e))
}

/// One `delete` (`limit: 0` for `many`). Returns how many documents were deleted.
pub(crate) async fn delete<T: Model>(call: DeleteCall<'_>) -> Result<u64> {
    let DeleteCall {
        odm,
        filter,
        many,
        session,
    } = call;
    let coll = odm.raw_collection::<T>();
    // Shown only when the delete fails (a copy costs less than formatting it).
    let shown = filter.clone();
    let result = if many {
        let action = coll.delete_many(filter);
        send!(action, session)
    } else {
        let action = coll.delete_one(filter);
        send!(action, session)
    };
    Ok(result
        .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_filter(&shown), e))?
        .deleted_count)
}
