//! One level of a cascade: new source values written into the copies of them, the updates
//! every cascade, settle and refill ends with (the levels below are `transitive`'s).

use std::collections::BTreeMap;
use std::future::Future;

use bson::{doc, Bson, Document};
use mongodb::options::UpdateOptions;
use mongodb::ClientSession;

use super::{CopyInfo, CopyKind};
use crate::engine::{Effect, Own};
use crate::{Error, Odm, Result};

/// The updates of one copy for new source values: one `update_many` per distinct new value
/// and [chunk](crate::batch) of source ids, into the dependents matching `scope` (all of them
/// when `None`). Returns the source ids whose copies were written, with the values written. A
/// value the copy's type cannot decode, or an update refused outside a session, goes into
/// `failures` and the other updates are still sent; in a session an error ends the cascade
/// (the server has aborted the transaction). `progress` counts the sources as their updates
/// are sent.
pub(super) async fn write_copy(
    odm: &Odm,
    sources: &[Document],
    copy: &CopyInfo,
    scope: Option<&Document>,
    mut session: Option<&mut ClientSession>,
    failures: &mut Failures,
    progress: &mut crate::progress::Tracker,
) -> Result<Vec<(Bson, Document)>> {
    // Sources with the same new values share one update.
    let mut groups: BTreeMap<Vec<u8>, (Document, Vec<Bson>)> = BTreeMap::new();
    for source in sources {
        let Some(id) = source.get("_id") else {
            continue;
        };
        // A value the copy's type cannot decode is never copied; the other sources are.
        let set: Document = match copy.values_of(source) {
            Ok(values) => values.into_iter().collect(),
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let key = bson::serialize_to_vec(&set).unwrap_or_default();
        groups
            .entry(key)
            .or_insert_with(|| (set, Vec::new()))
            .1
            .push(id.clone());
    }
    // The ids go in the filter and, for arrays, in the array filter: half the budget each.
    let budget = match &copy.kind {
        CopyKind::Summary { array: true, .. } => crate::batch::MAX_IDS_BYTES / 2,
        _ => crate::batch::MAX_IDS_BYTES,
    };
    let groups = groups.into_values().flat_map(|(values, ids)| {
        crate::batch::chunks_within(ids, budget, crate::batch::MAX_IDS)
            .into_iter()
            .map(move |chunk| (values.clone(), chunk))
    });
    // What landed, for the copies of this copy (level after level).
    let mut written = Vec::new();
    for (values, ids) in groups {
        let landed: Vec<(Bson, Document)> =
            ids.iter().map(|id| (id.clone(), values.clone())).collect();
        let filter = within(copy.dependents_of(&ids), scope);
        progress.advance(ids.len() as u64);
        let Some((update, options)) = copy_update(copy, values, &ids) else {
            continue;
        };
        let outcome = update_copies(
            odm,
            copy.dependent,
            filter.clone(),
            update,
            options,
            session.as_deref_mut(),
        )
        .await;
        match outcome {
            Ok(_) => {
                super::record_write(copy);
                written.extend(landed);
            }
            // In a transaction the server has aborted it: nothing more can be written.
            Err(e) if session.is_some() => return Err(e),
            // Outside one, the other dependents are still updated; this one is reported.
            Err(e) => failures.push(Error::CopiesNotUpdated {
                collection: copy.dependent.to_owned(),
                path: copy.path.clone(),
                filter: crate::error::show_filter(&filter),
                failures: vec![e],
            }),
        }
    }
    Ok(written)
}

/// The update writing `values` into the copies of the sources `ids`: array filters for an
/// array of summaries; `None` for a latest-N array, which is recomputed instead.
pub(super) fn copy_update(
    copy: &CopyInfo,
    values: Document,
    ids: &[Bson],
) -> Option<(Document, UpdateOptions)> {
    Some(match &copy.kind {
        CopyKind::Summary {
            array: true, id, ..
        } => {
            let mut set = Document::new();
            for (to, v) in values {
                set.insert(format!("{}.$[copy].{to}", copy.path), v);
            }
            let options = UpdateOptions::builder()
                .array_filters(vec![crate::literal::is_in(
                    &format!("copy.{id}"),
                    ids.to_vec(),
                )])
                .build();
            (doc! { "$set": set }, options)
        }
        CopyKind::Summary { array: false, .. } => {
            let mut set = Document::new();
            for (to, v) in values {
                set.insert(format!("{}.{to}", copy.path), v);
            }
            (doc! { "$set": set }, UpdateOptions::default())
        }
        CopyKind::Flat { .. } => {
            let v = values
                .into_iter()
                .next()
                .map(|(_, v)| v)
                .unwrap_or(Bson::Null);
            (
                doc! { "$set": { copy.path.as_str(): v } },
                UpdateOptions::default(),
            )
        }
        CopyKind::Latest { .. } => return None,
    })
}

tokio::task_local! {
    /// While set (see [`waiting_at_most`]): how long, in milliseconds, an update of copies
    /// outside a session may wait on the server for a transaction holding its documents.
    static WAIT_AT_MOST: i64;
}

/// Runs `work` with every update of copies it sends outside a session (through
/// [`update_copies`]) bounded to `ms` of waiting on the server (`maxTimeMS`).
///
/// A write outside a transaction that meets a document a transaction holds waits, on the
/// server, for that transaction to end, and holds a pooled connection meanwhile. With as many
/// such writes as the pool has connections, the transaction cannot get a connection to
/// commit, and all of them wait until the server ends it (60 s). Bounded, such a write fails
/// with `MaxTimeMSExpired` (code 50) instead: nothing was written, the connection is free, and
/// the caller runs it again (see `settle`). Writes in a transaction never wait (the second
/// writer of a document gets a write conflict at once), so they are not bounded.
pub(super) async fn waiting_at_most<F: Future>(ms: i64, work: F) -> F::Output {
    WAIT_AT_MOST.scope(ms, work).await
}

/// `update_many(filter, update)` on `collection` with `options` (only its array filters), as
/// one of the ODM's own writes, in `session` when given; outside one, while
/// [`waiting_at_most`] is in force, bounded to that wait (see [`Own::waiting_at_most`]). One
/// command either way. Copies are derived data: no holder's version moves.
pub(super) async fn update_copies(
    odm: &Odm,
    collection: &str,
    filter: Document,
    update: Document,
    options: UpdateOptions,
    session: Option<&mut ClientSession>,
) -> Result<()> {
    let mut write = Own::update(collection, filter, update, Effect::Derived, "cascade");
    if let Some(array_filters) = options.array_filters {
        write = write.array_filters(array_filters);
    }
    if let (Ok(ms), None) = (WAIT_AT_MOST.try_with(|ms| *ms), &session) {
        write = write.waiting_at_most(ms);
    }
    odm.write_own(write, session).await.map(|_| ())
}

/// Errors met while updating copies, past which the other copies are still updated.
#[derive(Default)]
pub(crate) struct Failures(Vec<Error>);

impl Failures {
    pub(crate) fn push(&mut self, e: Error) {
        self.0.push(e);
    }

    /// `Ok` when nothing failed, the error itself when one thing did, else every error.
    pub(crate) fn into_result(mut self) -> Result<()> {
        match self.0.len() {
            0 => Ok(()),
            1 => Err(self.0.remove(0)),
            _ => Err(Error::Incomplete(self.0)),
        }
    }
}

/// `filter` narrowed to the documents matching `scope` as well: one document when their fields
/// differ, else both under `$and`.
pub(super) fn within(mut filter: Document, scope: Option<&Document>) -> Document {
    let Some(scope) = scope else {
        return filter;
    };
    if scope
        .keys()
        .any(|k| filter.contains_key(k) || k.starts_with('$'))
    {
        return doc! { "$and": [filter, scope.clone()] };
    }
    filter.extend(scope.clone());
    filter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_joins_the_filter_or_sits_beside_it() {
        let scope = doc! { "_id": { "$in": [1, 2] } };
        assert_eq!(
            within(doc! { "parts.id": 7 }, Some(&scope)),
            doc! { "parts.id": 7, "_id": { "$in": [1, 2] } }
        );
        assert_eq!(
            within(doc! { "_id": 7 }, Some(&scope)),
            doc! { "$and": [{ "_id": 7 }, { "_id": { "$in": [1, 2] } }] }
        );
        assert_eq!(within(doc! { "a": 1 }, None), doc! { "a": 1 });
    }
}
