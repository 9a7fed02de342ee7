//! Cascading an update of a copied source field to every copy.

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;
use std::collections::HashMap;

use super::transitive::cascade_values;
use super::values::Failures;
use super::{CopyInfo, CopyKind};
use crate::document::value_at;
use crate::document::IdKey;
use crate::engine::{find_documents, Effect, Own, Returning};
use crate::transaction::TransactionMode;
use crate::{Error, Model, Odm, Result};

/// Rounds of re-reading and cascading again before a cascade without a transaction gives up
/// (it also gives up at [`Odm::retry_deadline`]).
pub(super) const MAX_ATTEMPTS: usize = 50;

/// Updates the sources matching `filter` and every copy of the fields the update writes.
///
/// Commands, for one source (`update_one`, `update_by_id`): one `findAndModify` (the update,
/// returning the new values of the copied fields), then one `update` per dependent copy
/// (`update_many`, with array filters for arrays of summaries); for several sources
/// (`update_many`): one `find` for their ids, one `update`, one `find` for the new values, then
/// one `update` per dependent copy and distinct new value. A copy that is itself copied adds,
/// per level below, one `find` of the documents it wrote and one `update` per copy of it and
/// distinct new value (see `transitive`); a cycle of copies is refused before anything is sent.
///
/// By default ([`TransactionMode::Never`], the builders' default for cascades) no transaction:
/// the commands above, then one `find` re-reading the sources, with one more round of copy
/// updates each time a concurrent update changed them in between; the copies are stale for
/// that interval only (the seeds' "sub-second interval") and never end different from the
/// source, whatever the number of copies; when concurrent updates keep changing the sources
/// for 50 rounds or until [`Odm::retry_deadline`], [`Error::CascadeIncomplete`] names the
/// copies that may be stale. In a transaction (`Auto`/`Always`): the same commands plus
/// `commitTransaction`, the whole transaction run again on write conflicts (after
/// `abortTransaction`) until the retry deadline, so readers never see the interval; with
/// `Auto`, a cascade too large for one transaction falls back to the default. In the caller's
/// session: the same commands, nothing retried (the caller commits, and retries on
/// [`Error::is_transient`]).
pub(super) async fn update_now<T: Model>(
    odm: &Odm,
    filter: Document,
    update: Document,
    copies: Vec<CopyInfo>,
    many: bool,
    mode: TransactionMode,
    session: Option<&mut ClientSession>,
) -> Result<UpdateResult> {
    if let Some(s) = session {
        return steps::<T>(odm, &filter, &update, &copies, many, Some(s))
            .await
            .map(|(r, _)| r);
    }
    let transactional = match mode {
        TransactionMode::Never => false,
        TransactionMode::Always => true,
        TransactionMode::Auto => odm.supports_transactions().await?,
    };
    if transactional {
        match in_transaction::<T>(odm, &filter, &update, &copies, many).await {
            Err(e) if mode == TransactionMode::Auto && crate::transaction::is_too_large(&e) => {
                // Too many copies for one transaction: nothing was written; take the path that
                // scales to any number of copies.
            }
            other => return other,
        }
    }
    let (result, values) = update_sources::<T>(odm, &filter, &update, &copies, many).await?;
    let follow = cascade_then_converge(odm, T::COLLECTION, &copies, values);
    Box::pin(crate::trace::step!("cascade", T::COLLECTION, follow)).await?;
    Ok(result)
}

/// The values of the copied fields of `source`, in the order of `copies` and their fields.
pub(super) fn copied_values(source: &Document, copies: &[CopyInfo]) -> Vec<Bson> {
    copies
        .iter()
        .flat_map(|c| c.fields.iter().map(|(from, _)| value_at(source, from)))
        .collect()
}

/// Without isolation a concurrent update may have cascaded an older value after ours: re-read
/// the sources `cascaded` (the values last written to the copies) and cascade again those that
/// changed, until the copies hold what the sources hold. The last writer of a source always
/// cascades its value last, so the copies converge on it. One `find` when nothing changed.
pub(super) async fn converge(
    odm: &Odm,
    source: &'static str,
    copies: &[CopyInfo],
    mut cascaded: Vec<Document>,
) -> Result<()> {
    let start = std::time::Instant::now();
    let mut rounds = 0;
    while rounds < MAX_ATTEMPTS && (rounds == 0 || start.elapsed() < odm.retry_deadline()) {
        rounds += 1;
        let ids: Vec<Bson> = cascaded
            .iter()
            .filter_map(|d| d.get("_id").cloned())
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let before: std::collections::HashMap<IdKey, Vec<Bson>> = cascaded
            .iter()
            .filter_map(|d| Some((IdKey::of(d.get("_id")?), copied_values(d, copies))))
            .collect();
        // Routed: the key values of the sources, read with the values last cascaded.
        let key = crate::catalog::KeyCarrier::of(odm.catalog(), source);
        let known: HashMap<IdKey, &Document> = cascaded
            .iter()
            .filter_map(|d| Some((IdKey::of(d.get("_id")?), d)))
            .collect();
        let route = |filter: &mut Document, chunk: &[Bson]| {
            let docs = chunk
                .iter()
                .filter_map(|id| known.get(&IdKey::of(id)).copied());
            key.restrict(filter, docs);
        };
        let now = read_values_routed(odm, source, &ids, copies, None, route).await?;
        let present: std::collections::HashSet<IdKey> = now
            .iter()
            .filter_map(|d| d.get("_id").map(IdKey::of))
            .collect();
        let gone: Vec<Bson> = ids
            .iter()
            .filter(|id| !present.contains(&IdKey::of(id)))
            .cloned()
            .collect();
        forget(odm, &gone, copies, None).await?;
        let changed: Vec<Document> = now
            .into_iter()
            .filter(|d| {
                d.get("_id")
                    .and_then(|id| before.get(&IdKey::of(id)))
                    .is_none_or(|old| *old != copied_values(d, copies))
            })
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        cascade_values(odm, &changed, copies, None).await?;
        cascaded = changed;
    }
    // The values last cascaded were never confirmed by a re-read.
    Err(Error::CascadeIncomplete {
        collection: source.to_owned(),
        ids: cascaded
            .iter()
            .map(|d| crate::error::show_id(d.get("_id")))
            .collect(),
        paths: copies
            .iter()
            .map(|c| format!("{}.{}", c.dependent, c.path))
            .collect(),
        rounds,
    })
}

/// Sources deleted while their copies were being written: their summaries are taken out
/// again, as the delete did (pulled from arrays; an optional single summary cleared), from the
/// dependents matching `scope` (all of them when `None`). Other copies of them are left to the
/// sweep. One `update` per such copy; none when nothing is gone.
pub(super) async fn forget(
    odm: &Odm,
    gone: &[Bson],
    copies: &[CopyInfo],
    scope: Option<&Document>,
) -> Result<()> {
    if gone.is_empty() {
        return Ok(());
    }
    for copy in copies {
        // The ids go in the filter and in the `$pull`: half the budget each.
        for chunk in crate::batch::chunks_within(
            gone.to_vec(),
            crate::batch::MAX_IDS_BYTES / 2,
            crate::batch::MAX_IDS,
        ) {
            let update = match &copy.kind {
                CopyKind::Summary {
                    array: true, id, ..
                } => {
                    doc! { "$pull": { copy.path.as_str(): crate::literal::is_in(id, chunk.clone()) } }
                }
                CopyKind::Summary {
                    array: false,
                    optional: true,
                    ..
                } => doc! { "$set": { copy.path.as_str(): Bson::Null } },
                _ => break,
            };
            let filter = super::values::within(copy.dependents_of(&chunk), scope);
            super::values::update_copies(
                odm,
                copy.dependent,
                filter,
                update,
                mongodb::options::UpdateOptions::default(),
                None,
            )
            .await?;
        }
    }
    Ok(())
}

/// After one source document was written by a command other than the cascading update (a
/// replacement, a find-and-modify): cascades the fields of `copies` from the document as it
/// now is (`after`, or read back by `id` when the caller has only the old document) and,
/// outside a session, converges.
///
/// Commands: one `find` when `after` is `None`; one `update` per copy; outside a session one
/// `find` re-reading the source (more only when a concurrent update changed it).
///
/// Traced as the step `cascade` of the operation: the source's own write is not in it.
pub(super) async fn after_write_now(
    odm: &Odm,
    source: &'static str,
    id: Bson,
    after: Option<Document>,
    copies: Vec<CopyInfo>,
    session: Option<&mut ClientSession>,
) -> Result<()> {
    if copies.is_empty() {
        return Ok(());
    }
    let follow = follow_ups(odm, source, id, after, copies, session);
    Box::pin(crate::trace::step!("cascade", source, follow)).await
}

/// The copies' writes after one source document was written (untraced): the values, then the
/// copies, converging outside a session.
pub(super) async fn follow_ups(
    odm: &Odm,
    source: &'static str,
    id: Bson,
    after: Option<Document>,
    copies: Vec<CopyInfo>,
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    if copies.is_empty() {
        return Ok(());
    }
    let values = match after {
        Some(after) => vec![after],
        None => read_values(odm, source, &[id], &copies, session.as_deref_mut()).await?,
    };
    match session {
        Some(s) => cascade_values(odm, &values, &copies, Some(s)).await,
        None => cascade_then_converge(odm, source, &copies, values).await,
    }
}

/// Outside a transaction: the copies of `values`, then the re-read that settles concurrent
/// updates of the sources, even when some copies were refused (their error is returned with
/// whatever the re-read found).
pub(super) async fn cascade_then_converge(
    odm: &Odm,
    source: &'static str,
    copies: &[CopyInfo],
    values: Vec<Document>,
) -> Result<()> {
    let mut failures = Failures::default();
    if let Err(e) = cascade_values(odm, &values, copies, None).await {
        failures.push(e);
    }
    if let Err(e) = converge(odm, source, copies, values).await {
        failures.push(e);
    }
    failures.into_result()
}

/// Replaces one source document and cascades the copied fields the replacement changes.
///
/// Commands: one `findAndModify` (the replacement, returning the copied fields as they were),
/// one `update` per copy whose fields changed, then, outside a session and when something was
/// cascaded, one `find` re-reading the source.
pub(super) async fn replace_now<T: Model>(
    odm: &Odm,
    filter: Document,
    replacement: Document,
    upsert: bool,
    copies: Vec<CopyInfo>,
    mut session: Option<&mut ClientSession>,
) -> Result<UpdateResult> {
    // The user's replacement, prepared by the maintainers before the cascade; sent as a
    // `findAndModify`, which returns the values the copies had.
    let mut write = Own::replace(
        T::COLLECTION,
        filter,
        replacement.clone(),
        Effect::Relayed,
        "replace",
    );
    write.upsert = upsert;
    let returning = Returning::before(projection(&copies));
    let before = odm
        .modify_own(write.of::<T>(), returning, session.as_deref_mut())
        .await?;
    let mut result = UpdateResult::default();
    let Some(before) = before else {
        if upsert {
            result.upserted_id = replacement.get("_id").cloned();
        }
        return Ok(result);
    };
    result.matched_count = 1;
    result.modified_count = 1;
    let changed: Vec<CopyInfo> = copies
        .into_iter()
        .filter(|c| {
            let one = std::slice::from_ref(c);
            copied_values(&before, one) != copied_values(&replacement, one)
        })
        .collect();
    let id = replacement.get("_id").cloned().unwrap_or(Bson::Null);
    after_write_now(odm, T::COLLECTION, id, Some(replacement), changed, session).await?;
    Ok(result)
}

/// The update and its cascade in one transaction, retried on write conflicts.
async fn in_transaction<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: &Document,
    copies: &[CopyInfo],
    many: bool,
) -> Result<UpdateResult> {
    crate::transaction::in_transaction(
        odm,
        &(filter, update, copies, many),
        |odm, s, (filter, update, copies, many)| {
            Box::pin(async move {
                steps::<T>(odm, filter, update, copies, *many, Some(s))
                    .await
                    .map(|(result, _)| result)
            })
        },
    )
    .await
}

pub(super) fn projection(copies: &[CopyInfo]) -> Document {
    let mut p = doc! { "_id": 1 };
    for c in copies {
        for (source, _) in &c.fields {
            p.insert(source.as_str(), 1);
        }
        // The kind of a source, to tell a document of another kind from a source.
        if let Some(k) = c.source_kind {
            p.insert(k.field, 1);
        }
    }
    p
}

/// The update, then the copies; returns the update's result and the sources' new values.
async fn steps<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: &Document,
    copies: &[CopyInfo],
    many: bool,
    session: Option<&mut ClientSession>,
) -> Result<(UpdateResult, Vec<Document>)> {
    steps_with::<T>(odm, filter, update, copies, many, session, true).await
}

/// The update and, when `cascade`, the copies.
pub(super) async fn steps_with<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: &Document,
    copies: &[CopyInfo],
    many: bool,
    mut session: Option<&mut ClientSession>,
    cascade: bool,
) -> Result<(UpdateResult, Vec<Document>)> {
    let mut result = UpdateResult::default();
    let values = if many {
        // The ids, and the shard key to route each chunk's update to the shards holding it.
        let key = crate::catalog::KeyCarrier::new(T::entry().shard_key);
        let mut projection = doc! { "_id": 1 };
        key.project(&mut projection);
        let only_ids = FindOptions::builder().projection(projection).build();
        let read: Vec<Document> = find_documents(
            odm,
            T::COLLECTION,
            filter.clone(),
            only_ids,
            session.as_deref_mut(),
        )
        .await?;
        let keyed: HashMap<IdKey, &Document> = read
            .iter()
            .filter_map(|d| Some((IdKey::of(d.get("_id")?), d)))
            .collect();
        let route = |filter: &mut Document, chunk: &[Bson]| {
            let docs = chunk
                .iter()
                .filter_map(|id| keyed.get(&IdKey::of(id)).copied());
            key.restrict(filter, docs);
        };
        let ids: Vec<Bson> = read.iter().filter_map(|d| d.get("_id").cloned()).collect();
        if ids.is_empty() {
            return Ok((result, Vec::new()));
        }
        for chunk in crate::batch::chunks_of(&ids) {
            // The caller's filter again, with its guards (a bounded push's room): a document
            // that stopped matching since the read of ids is left alone, as one update would.
            let mut filter =
                doc! { "$and": [filter.clone(), crate::literal::is_in("_id", chunk.clone())] };
            route(&mut filter, &chunk);
            let write = Own::update(
                T::COLLECTION,
                filter,
                update.clone(),
                Effect::Relayed,
                "update",
            );
            let part = odm
                .write_own(write.of::<T>(), session.as_deref_mut())
                .await?;
            result.matched_count += part.matched;
            result.modified_count += part.modified;
        }
        read_values_routed(
            odm,
            T::COLLECTION,
            &ids,
            copies,
            session.as_deref_mut(),
            route,
        )
        .await?
    } else {
        match update_one_returning::<T>(odm, filter, update, copies, session.as_deref_mut()).await?
        {
            None => return Ok((result, Vec::new())),
            Some(d) => {
                result.matched_count = 1;
                result.modified_count = 1;
                vec![d]
            }
        }
    };
    if cascade {
        let follow = cascade_values(odm, &values, copies, session);
        Box::pin(crate::trace::step!("cascade", T::COLLECTION, follow)).await?;
    }
    Ok((result, values))
}

/// The update of one source, as one `findAndModify` returning the copied fields (and the shard
/// key, which the re-read that settles the copies names) as the update left them.
async fn update_one_returning<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: &Document,
    copies: &[CopyInfo],
    mut session: Option<&mut ClientSession>,
) -> Result<Option<Document>> {
    let mut fields = projection(copies);
    crate::catalog::KeyCarrier::new(T::entry().shard_key).project(&mut fields);
    // A sharded source's key, read first when the filter lacks it: a cluster before
    // MongoDB 7.1 refuses a `findAndModify` without it.
    let routed = crate::engine::routed::<T>(odm, filter.clone(), session.as_deref_mut()).await?;
    let write = Own::update(
        T::COLLECTION,
        routed,
        update.clone(),
        Effect::Relayed,
        "update",
    )
    .of::<T>()
    .one()
    .showing(crate::error::show_filter(filter));
    odm.modify_own(write, Returning::after(fields), session)
        .await
}

/// The update of the sources alone (the first half of [`steps`]): its result and the sources'
/// new values, for the caller to cascade.
async fn update_sources<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: &Document,
    copies: &[CopyInfo],
    many: bool,
) -> Result<(UpdateResult, Vec<Document>)> {
    steps_with::<T>(odm, filter, update, copies, many, None, false).await
}

/// The current values of the copied fields of the sources `ids` in `source`: one `find` per
/// [chunk](crate::batch) of ids (sorted by `_id` within it).
pub(super) async fn read_values(
    odm: &Odm,
    source: &str,
    ids: &[Bson],
    copies: &[CopyInfo],
    session: Option<&mut ClientSession>,
) -> Result<Vec<Document>> {
    read_values_routed(odm, source, ids, copies, session, |_, _| {}).await
}

/// [`read_values`], `route` adding to each chunk's filter the condition on the sources' shard
/// key that the caller knows. The sources' shard key is read too, for the re-read that
/// settles them ([`converge`]) to name it.
async fn read_values_routed(
    odm: &Odm,
    source: &str,
    ids: &[Bson],
    copies: &[CopyInfo],
    mut session: Option<&mut ClientSession>,
    route: impl Fn(&mut Document, &[Bson]),
) -> Result<Vec<Document>> {
    let mut out = Vec::new();
    let mut fields = projection(copies);
    crate::catalog::KeyCarrier::of(odm.catalog(), source).project(&mut fields);
    for chunk in crate::batch::chunks_of(ids) {
        let options = FindOptions::builder()
            .projection(fields.clone())
            .sort(doc! { "_id": 1 })
            .build();
        let mut filter = crate::literal::is_in("_id", chunk.clone());
        route(&mut filter, &chunk);
        out.extend(find_documents(odm, source, filter, options, session.as_deref_mut()).await?);
    }
    Ok(out)
}
