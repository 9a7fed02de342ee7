//! Checking the copies a write took, once the write has landed.
//!
//! A write that takes copies (an insert, a replacement, an update writing a reference or whole
//! summaries) reads its sources before it lands. A rename of a source that cascades between the
//! read and the landing misses the document written with the old value; a delete that pulls
//! its summaries meanwhile misses it too. Outside a transaction nothing orders the two, so the
//! write re-reads its sources once it has landed and corrects what it wrote.
//!
//! When the write knows the documents it wrote (by `_id`: inserts, replacements), it corrects
//! those only, and never touches the documents other writers maintain: a rename running in a
//! transaction meanwhile is not aborted by it, and it does not wait for concurrent renames of
//! the same source to stop. It corrects by writing what it read, then reads again, until a
//! re-read finds the sources as it last wrote them; whatever a rename does after that re-read,
//! the rename's own cascade reaches the documents, which have landed. A write that does not
//! know its documents (an update by filter) settles as a cascade does (see `converge`).

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use bson::{Bson, Document};

use super::cascade::{converge, copied_values, forget, read_values};
use super::transitive::cascade_values_within;
use super::CopyInfo;
use crate::document::IdKey;
use crate::{Error, Odm, Result};

/// The source documents a write copied from, kept to check them once the write has landed.
#[derive(Debug, Default)]
#[must_use = "settle the copies once the write has landed"]
pub(crate) struct Taken {
    /// Per source collection: the copies taken from it and the source values used.
    pub(super) sources: Vec<(&'static str, Vec<CopyInfo>, Vec<Document>)>,
    /// The documents the write wrote, as filters on one chunk of their `_id`s each; empty when
    /// the write does not know them by id.
    scope: Vec<Document>,
}

impl Taken {
    /// Whether no copy was taken: nothing to settle.
    pub(crate) fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Notes the documents the write wrote (which all hold an `_id`): only they are corrected,
    /// found by `_id` and, for a sharded collection, by the values of `key` they hold.
    pub(super) fn wrote(&mut self, docs: &[Document], key: &crate::catalog::KeyCarrier) {
        let ids: Vec<Bson> = docs.iter().filter_map(|d| d.get("_id").cloned()).collect();
        let mut rest = docs;
        self.scope = crate::batch::chunks_within(
            ids,
            crate::batch::MAX_IDS_BYTES / 2,
            crate::batch::MAX_IDS,
        )
        .into_iter()
        .map(|chunk| {
            let (these, after) = rest.split_at(chunk.len());
            rest = after;
            let mut filter = crate::literal::is_in("_id", chunk);
            key.restrict(&mut filter, these);
            filter
        })
        .collect();
    }

    /// Once the write has landed (outside a caller's session): re-reads the sources copied
    /// and, for any a concurrent update changed or a concurrent delete removed since it was
    /// read, corrects the copies.
    ///
    /// Commands: one `find` per source collection; when a source changed, one `update` per
    /// copy of it (and chunk of the documents written) and one more `find`, again until a
    /// `find` finds nothing new. Each `update` waits at most 1 s on the server for a
    /// transaction holding its documents; that wait running out, or a write conflict, is
    /// waited out (behind the other writers of this process that met the conflict) and the
    /// round run again; [`Error::CascadeIncomplete`] when the sources still change at
    /// [`Odm::retry_deadline`].
    pub(crate) async fn settle(self, odm: &Odm) -> Result<()> {
        for (source, copies, used) in self.sources {
            if self.scope.is_empty() {
                converge(odm, source, &copies, used).await?;
            } else {
                own(odm, source, &copies, used, &self.scope).await?;
            }
        }
        Ok(())
    }
}

/// Corrects the copies of `copies` in the documents of `scope` until a re-read of the sources
/// finds what was last written to them (`used`).
async fn own(
    odm: &Odm,
    source: &'static str,
    copies: &[CopyInfo],
    mut used: Vec<Document>,
    scope: &[Document],
) -> Result<()> {
    let start = Instant::now();
    let deadline = odm.retry_deadline();
    let mut round = 0;
    // The lock of the write the correction last conflicted on (see `crate::contention`).
    let mut held = None;
    loop {
        round += 1;
        let ids: Vec<Bson> = used.iter().filter_map(|d| d.get("_id").cloned()).collect();
        if ids.is_empty() {
            return Ok(());
        }
        let before: HashMap<IdKey, Vec<Bson>> = used
            .iter()
            .filter_map(|d| Some((IdKey::of(d.get("_id")?), copied_values(d, copies))))
            .collect();
        let now = read_values(odm, source, &ids, copies, None).await?;
        let present: HashSet<IdKey> = now
            .iter()
            .filter_map(|d| d.get("_id").map(IdKey::of))
            .collect();
        let gone: Vec<Bson> = ids
            .into_iter()
            .filter(|id| !present.contains(&IdKey::of(id)))
            .collect();
        let changed: Vec<Document> = now
            .iter()
            .filter(|d| {
                d.get("_id")
                    .and_then(|id| before.get(&IdKey::of(id)))
                    .is_none_or(|old| *old != copied_values(d, copies))
            })
            .cloned()
            .collect();
        if gone.is_empty() && changed.is_empty() {
            return Ok(());
        }
        if round > 1 && start.elapsed() >= deadline {
            return Err(Error::CascadeIncomplete {
                collection: source.to_owned(),
                ids: changed
                    .iter()
                    .filter_map(|d| d.get("_id"))
                    .chain(&gone)
                    .map(|id| crate::error::show_id(Some(id)))
                    .collect(),
                paths: copies
                    .iter()
                    .map(|c| format!("{}.{}", c.dependent, c.path))
                    .collect(),
                rounds: round,
            });
        }
        match correct(odm, copies, &gone, &changed, scope).await {
            Ok(()) => used = now,
            // A transaction holds the documents: once it is over, read again. Behind the
            // other writers of this process that met the same write (a rename's cascade), so
            // that the correction and the rename do not abort each other again and again.
            Err(e) if transient(&e) => {
                let queued = crate::contention::queue_behind(
                    &odm.contention,
                    &mut held,
                    &e,
                    start,
                    deadline,
                )
                .await;
                if !queued {
                    crate::transaction::wait(start, deadline, round as u32).await;
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// How long a correction waits on the server for a transaction holding its documents before
/// it lets its connection go and runs again (see [`correct`]).
const CORRECTION_WAIT_MS: i64 = 1000;

/// Takes the summaries of `gone` out of, and writes the values of `changed` into, the
/// documents of `scope`, outside a transaction, each update waiting at most
/// [`CORRECTION_WAIT_MS`] on the server.
///
/// A write outside a transaction that meets a document a transaction holds (a rename's
/// cascade in transaction mode) waits for it, holding a pooled connection. Unbounded, ten such
/// corrections held the pool and the rename could not get a connection to commit: everything
/// waited until the server ended the transaction (60 s). In a transaction of its own, the
/// correction would make the default mode's cascades (writes outside transactions) wait on it
/// the same way. Bounded, it ends with `MaxTimeMSExpired`, having written nothing, and the
/// round runs again after a backoff.
async fn correct(
    odm: &Odm,
    copies: &[CopyInfo],
    gone: &[Bson],
    changed: &[Document],
    scope: &[Document],
) -> Result<()> {
    let correction = async {
        for chunk in scope {
            forget(odm, gone, copies, Some(chunk)).await?;
            if !changed.is_empty() {
                cascade_values_within(odm, changed, copies, Some(chunk), None).await?;
            }
        }
        Ok(())
    };
    super::values::waiting_at_most(CORRECTION_WAIT_MS, correction).await
}

/// Whether every failure in `e` is a conflict that running the round again may get past.
fn transient(e: &Error) -> bool {
    match e {
        Error::CopiesNotUpdated { failures, .. } | Error::Incomplete(failures) => {
            !failures.is_empty() && failures.iter().all(transient)
        }
        e => e.is_transient() || e.is_time_limit(),
    }
}
