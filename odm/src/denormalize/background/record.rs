//! Recording the intent of a background cascade with the source write.

use bson::{doc, Bson, Document};
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::super::cascade::{
    after_write_now, cascade_then_converge, copied_values, projection, steps_with,
};
use super::super::CopyInfo;
use super::{name_of, INTENTS};
use crate::engine::{Effect, Own, Returning};
use crate::transaction::TransactionMode;
use crate::{Error, Model, Odm, Result};

/// Statements per `update` command recording intents: far below `maxWriteBatchSize`, and with
/// the ids' own budget, far below 16 MB.
const STATEMENTS: usize = 10_000;

/// Refuses a background cascade on a deployment without transactions, before anything is
/// written: the intent must commit with the source write.
async fn require_transactions(odm: &Odm, source: &str) -> Result<()> {
    if odm.supports_transactions().await? {
        return Ok(());
    }
    Err(Error::Unsupported(format!(
        "copies of `{source}` are cascaded in the background: the update records the cascade's intent in its own transaction, and this deployment has no transactions (a replica set or a sharded cluster has them)"
    )))
}

/// Upserts the intent of each source in `sources` (documents with their `_id`) for `copies`,
/// inside the session's transaction: one `update` command per 10,000 sources (per
/// [chunk](crate::batch) of ids), each statement an upsert bumping `seq`.
pub(super) async fn record(
    odm: &Odm,
    source: &str,
    sources: &[Document],
    copies: &[CopyInfo],
    session: &mut ClientSession,
) -> Result<()> {
    let names: Vec<Bson> = copies
        .iter()
        .filter(|c| c.background)
        .map(|c| Bson::String(name_of(c)))
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    let ids: Vec<Bson> = sources
        .iter()
        .filter_map(|d| d.get("_id").cloned())
        .collect();
    let now = bson::DateTime::now();
    let chunks = crate::batch::chunks_within(ids, crate::batch::MAX_IDS_BYTES / 2, STATEMENTS);
    for chunk in chunks {
        let intents = chunk
            .into_iter()
            .map(|id| intent(source, id, names.clone(), now.into()))
            .collect();
        let written = odm
            .write_own_all(intents, true, INTENTS, Some(&mut *session))
            .await?;
        if let Some(first) = written.refused.first() {
            return Err(Error::Unsupported(format!(
                "cannot record the background cascade of `{source}` in `{INTENTS}`: {}",
                first.message
            )));
        }
    }
    Ok(())
}

/// The write recording the intent of the source `id` for the copies `names` at the time
/// `now`: an upsert bumping `seq`, of the ODM's own collection of intents.
pub(super) fn intent(source: &str, id: Bson, names: Vec<Bson>, now: Bson) -> Own<'static> {
    // A document of two plain keys: matched as a value, whatever `id` holds.
    let q = doc! { "_id": { "source": source, "id": id } };
    let u = doc! {
        "$inc": { "seq": 1_i64 },
        "$set": { "at": now.clone() },
        "$setOnInsert": { "since": now },
        "$addToSet": { "copies": { "$each": names } },
    };
    Own::update(INTENTS, q, u, Effect::Derived, "background intent")
        .one()
        .upsert()
}

/// The statement of [`intent`], as the cascade plan shows it.
pub(super) fn statement(source: &str, id: Bson, names: Vec<Bson>, now: Bson) -> Document {
    intent(source, id, names, now)
        .into_statement()
        .unwrap_or_default()
}

/// An update of sources with copies cascaded in the background (and perhaps others cascaded
/// at once): the update and the intents in one transaction.
///
/// Commands: the update as `cascade::update_now` sends it (one `findAndModify` for one source;
/// one `find`, one `update` and one `find` for several), one `update` recording the intents
/// (per 10,000 sources), `commitTransaction`. Copies cascaded at
/// once follow inside the transaction with [`TransactionMode::Auto`]/`Always`, after it (and
/// converged) with `Never`. In the caller's session: the same, nothing committed.
pub(crate) async fn update_and_record<T: Model>(
    odm: &Odm,
    filter: Document,
    update: Document,
    copies: Vec<CopyInfo>,
    many: bool,
    mode: TransactionMode,
    session: Option<&mut ClientSession>,
) -> Result<UpdateResult> {
    let (background, now): (Vec<CopyInfo>, Vec<CopyInfo>) =
        copies.into_iter().partition(|c| c.background);
    if let Some(s) = session {
        let (result, values) =
            steps_with::<T>(odm, &filter, &update, &now, many, Some(&mut *s), true).await?;
        record(odm, T::COLLECTION, &values, &background, s).await?;
        return Ok(result);
    }
    require_transactions(odm, T::COLLECTION).await?;
    let inside = mode != TransactionMode::Never;
    let context = (&filter, &update, &now, &background, many, inside);
    let (result, values) = crate::transaction::in_transaction(
        odm,
        &context,
        |odm, s, (filter, update, now, background, many, inside)| {
            Box::pin(async move {
                let (result, values) =
                    steps_with::<T>(odm, filter, update, now, *many, Some(&mut *s), *inside)
                        .await?;
                record(odm, T::COLLECTION, &values, background, s).await?;
                Ok((result, values))
            })
        },
    )
    .await?;
    if !inside && !now.is_empty() {
        let follow = cascade_then_converge(odm, T::COLLECTION, &now, values);
        Box::pin(crate::trace::step!("cascade", T::COLLECTION, follow)).await?;
    }
    Ok(result)
}

/// A replacement of one source with copies cascaded in the background: the replacement and
/// the intent (when a background copy's fields changed) in one transaction; copies cascaded at
/// once follow after it.
///
/// Commands: one `findAndModify` (the replacement, returning the copied fields as they were),
/// one `update` recording the intent when a background copy changed, `commitTransaction`; then
/// what a replacement cascades at once for the other copies. In the caller's session: the same,
/// nothing committed.
pub(crate) async fn replace_and_record<T: Model>(
    odm: &Odm,
    filter: Document,
    replacement: Document,
    upsert: bool,
    copies: Vec<CopyInfo>,
    session: Option<&mut ClientSession>,
) -> Result<UpdateResult> {
    let (before, changed) = match session {
        Some(s) => replace_step::<T>(odm, s, &filter, &replacement, upsert, &copies).await?,
        None => {
            require_transactions(odm, T::COLLECTION).await?;
            let context = (&filter, &replacement, upsert, &copies);
            crate::transaction::in_transaction(
                odm,
                &context,
                |odm, s, (filter, replacement, upsert, copies)| {
                    Box::pin(replace_step::<T>(
                        odm,
                        s,
                        filter,
                        replacement,
                        *upsert,
                        copies,
                    ))
                },
            )
            .await?
        }
    };
    let mut result = UpdateResult::default();
    if before.is_none() {
        if upsert {
            result.upserted_id = replacement.get("_id").cloned();
        }
        return Ok(result);
    }
    result.matched_count = 1;
    result.modified_count = 1;
    let now: Vec<CopyInfo> = changed.into_iter().filter(|c| !c.background).collect();
    if !now.is_empty() {
        let id = replacement.get("_id").cloned().unwrap_or(Bson::Null);
        after_write_now(odm, T::COLLECTION, id, Some(replacement), now, None).await?;
    }
    Ok(result)
}

/// The replacement and the intent of the background copies it changes, in `s`: the document
/// as it was (none when nothing matched) and the copies whose fields changed.
async fn replace_step<T: Model>(
    odm: &Odm,
    s: &mut ClientSession,
    filter: &Document,
    replacement: &Document,
    upsert: bool,
    copies: &[CopyInfo],
) -> Result<(Option<Document>, Vec<CopyInfo>)> {
    // The user's replacement, prepared by the maintainers before the cascade.
    let mut write = Own::replace(
        T::COLLECTION,
        filter.clone(),
        replacement.clone(),
        Effect::Relayed,
        "replace",
    );
    write.upsert = upsert;
    let returning = Returning::before(projection(copies));
    let before = odm
        .modify_own(write.of::<T>(), returning, Some(&mut *s))
        .await?;
    let Some(before) = before else {
        return Ok((None, Vec::new()));
    };
    let changed: Vec<CopyInfo> = copies
        .iter()
        .filter(|c| {
            let one = std::slice::from_ref(*c);
            copied_values(&before, one) != copied_values(replacement, one)
        })
        .cloned()
        .collect();
    record(
        odm,
        T::COLLECTION,
        std::slice::from_ref(replacement),
        &changed,
        s,
    )
    .await?;
    Ok((Some(before), changed))
}

/// A find-and-modify of one source whose update changes a background copy, outside the
/// caller's session: the `findAndModify` and the intent in one transaction of their own, so
/// that a crash between the two cannot leave the write without its intent. Returns the
/// document as the command returned it (none when nothing matched, and then no intent).
///
/// Commands: one `findAndModify`, one `update` recording the intent when a document matched,
/// `commitTransaction` (all again on a transient error, until the retry deadline). Refused
/// before anything is sent on a deployment without transactions.
pub(crate) async fn find_and_modify_and_record<T: Model>(
    odm: &Odm,
    filter: Document,
    update: Document,
    options: mongodb::options::FindOneAndUpdateOptions,
    copies: &[CopyInfo],
) -> Result<Option<bson::RawDocumentBuf>> {
    require_transactions(odm, T::COLLECTION).await?;
    let context = (&filter, &update, &options, copies);
    crate::transaction::in_transaction(
        odm,
        &context,
        |odm, s, (filter, update, options, copies)| {
            Box::pin(async move {
                let found = odm
                    .raw_collection::<T>()
                    .find_one_and_update((*filter).clone(), (*update).clone())
                    .with_options((*options).clone())
                    .session(&mut *s)
                    .await
                    .map_err(|e| {
                        Error::from_write(T::COLLECTION, || crate::error::show_filter(filter), e)
                    })?;
                if let Some(raw) = &found {
                    let id = crate::decode::id_of(raw).unwrap_or(Bson::Null);
                    record(odm, T::COLLECTION, &[doc! { "_id": id }], copies, s).await?;
                }
                Ok(found)
            })
        },
    )
    .await
}

/// After a write of one source made by a command of its own (a find-and-modify): records the
/// intent for the background copies among `copies`, in the caller's session when given, else
/// in a transaction of its own right after the write.
///
/// Commands: one `update` recording the intent (plus `commitTransaction` outside a session).
/// Outside a session the intent is not atomic with the write: a crash between the two leaves
/// the copies to [`Odm::verify_copies`](crate::Odm::verify_copies). A find-and-modify does not
/// take this path (see [`find_and_modify_and_record`]); a replacement records in its own
/// transaction too ([`replace_and_record`]).
pub(crate) async fn record_after_write(
    odm: &Odm,
    source: &'static str,
    id: &Bson,
    copies: &[CopyInfo],
    session: Option<&mut ClientSession>,
) -> Result<()> {
    let sources = [doc! { "_id": id.clone() }];
    match session {
        Some(s) => record(odm, source, &sources, copies, s).await,
        None => {
            require_transactions(odm, source).await?;
            let context = (&sources, copies);
            crate::transaction::in_transaction(odm, &context, |odm, s, (sources, copies)| {
                Box::pin(record(odm, source, *sources, copies, s))
            })
            .await
        }
    }
}
