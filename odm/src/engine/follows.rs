//! The interface through which a feature keeps what it maintains when another program writes
//! the collections (the follower, `crate::follower`, reads their change stream). The ordered
//! list of the features that do is `crate::pipeline`'s `Followers`; the follower offers each
//! event to that list and names no feature.
//!
//! For each batch of events, each feature in turn notes what an event means for it (a cascade
//! to run, a delete rule to apply, a node to repair), keeping its notes per collection; then,
//! collection by collection, each applies what it noted, reading the present state so that an
//! event applied twice changes nothing; then each finishes the batch (what spans collections).
//! A feature that noted a delete asks the follower to check first that the document is still
//! gone: one `find` per collection for every feature's deleted ids, and a document another
//! program deleted and inserted again keeps its data.

use std::collections::HashSet;
use std::time::Duration;

use bson::{Bson, Document};

use super::{BoxFuture, Odm};
use crate::catalog::Catalog;
use crate::document::IdKey;
use crate::error::DeleteRestricted;
use crate::Result;

/// The kind of a write another program made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Insert,
    Update,
    Replace,
    Delete,
}

/// One event of the change stream, as the features read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Event<'a> {
    pub op: Op,
    /// The document's `_id`.
    pub id: &'a Bson,
    /// Its key (`_id`, and the shard key's fields on a sharded collection).
    pub key: &'a Document,
    /// The fields an update changed (set or removed); `None` for the other kinds, which may
    /// have changed any field.
    pub paths: Option<&'a [String]>,
}

impl Event<'_> {
    /// Whether the write may have changed the field at `path` (or a field inside or above it).
    pub(crate) fn touches(&self, path: &str) -> bool {
        self.paths
            .is_none_or(|paths| paths.iter().any(|p| crate::document::overlaps(p, path)))
    }
}

/// Ids without repeats, in the order first seen.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    seen: HashSet<IdKey>,
    pub list: Vec<Bson>,
}

impl Ids {
    /// Adds `id` unless it is there.
    pub(crate) fn add(&mut self, id: &Bson) -> bool {
        let new = self.seen.insert(IdKey::of(id));
        if new {
            self.list.push(id.clone());
        }
        new
    }

    /// The ids that are `absent`, in their order.
    pub(crate) fn absent(&self, absent: &Absent) -> Vec<Bson> {
        self.list
            .iter()
            .filter(|id| absent.holds(id))
            .cloned()
            .collect()
    }
}

/// Which writes of a collection a feature follows, from the fewest to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum Interest {
    #[default]
    None,
    /// Its deletes (a delete rule).
    Deletes,
    /// Its inserts and deletes (a side of a subset pair).
    InsertsAndDeletes,
    /// Every write.
    All,
}

impl Interest {
    /// This interest when `holds`, else none.
    pub(crate) fn when(self, holds: bool) -> Interest {
        if holds {
            self
        } else {
            Interest::None
        }
    }
}

/// A step that does nothing: the default of [`Follows::apply`] and [`Follows::finish`].
pub(crate) fn done<'a>() -> BoxFuture<'a, Result<()>> {
    Box::pin(std::future::ready(Ok(())))
}

/// What noting an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Noticed {
    /// Nothing for this feature.
    Nothing,
    /// Something to apply.
    Something,
    /// The effects of a delete: applied only if the document is still gone (see [`Absent`]).
    Deleted,
}

/// The documents of one collection noted as deleted that are absent now (one `find` by the
/// follower): a delete's effects are applied to those only.
#[derive(Debug, Default)]
pub(crate) struct Absent(pub HashSet<IdKey>);

impl Absent {
    /// Whether the document `id` is gone.
    pub(crate) fn holds(&self, id: &Bson) -> bool {
        self.0.contains(&IdKey::of(id))
    }
}

/// What the features did with a batch, which the follower adds to its report.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub cascaded: u64,
    pub deleted: u64,
    pub latest_parents: u64,
    pub tree_nodes: u64,
    pub tree_deleted: u64,
    pub two_way_parents: u64,
    pub details_deleted: u64,
    pub tree_cycles: Vec<Bson>,
    pub violations: Vec<DeleteRestricted>,
    pub bad_documents: Vec<BadDocument>,
}

impl Applied {
    /// A document that could not be applied, logged at `warn` with `what` it was.
    pub(crate) fn bad(&mut self, bad: BadDocument, what: &'static str) {
        tracing::warn!(target: "odm", document = %bad, "follower: {what} could not be applied");
        self.bad_documents.push(bad);
    }
}

/// A document the follower could not apply, as its [`Error::Decode`](crate::Error::Decode)
/// names it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BadDocument {
    /// Its collection.
    pub collection: String,
    /// Its `_id` as the shell prints it (`{ _id: 7 }`).
    pub id: String,
    /// The offending field.
    pub path: String,
    /// Why it could not be applied.
    pub message: String,
}

impl From<crate::Error> for BadDocument {
    fn from(e: crate::Error) -> Self {
        match e {
            crate::Error::Decode {
                collection,
                id,
                path,
                message,
            } => BadDocument {
                collection,
                id,
                path,
                message,
            },
            other => BadDocument {
                collection: String::new(),
                id: String::new(),
                path: String::new(),
                message: other.to_string(),
            },
        }
    }
}

impl std::fmt::Display for BadDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} at `{}`: {}",
            self.collection, self.id, self.path, self.message
        )
    }
}

/// What a feature does with other programs' writes. Each method's default does nothing, so a
/// feature implements what it needs.
pub(crate) trait Follows {
    /// What it keeps of one collection's events in a batch.
    type Noted: Default + Send + Sync;
    /// What it keeps of a whole batch, for [`finish`](Follows::finish).
    type Batch: Default + Send + Sync;
    /// What its sweep after a lost history found and repaired, for [`lost`](Follows::lost).
    type Swept: Default + Send + 'static;

    /// Which writes of `collection` it follows, from the catalog alone.
    fn interest(_catalog: &Catalog, _collection: &'static str) -> Interest {
        Interest::None
    }

    /// Notes what `event` on `collection` calls for.
    fn note(
        _odm: &Odm,
        _collection: &'static str,
        _event: &Event<'_>,
        _noted: &mut Self::Noted,
        _batch: &mut Self::Batch,
    ) -> Noticed {
        Noticed::Nothing
    }

    /// Applies what it noted of `collection`'s events; deletes only of documents `absent`.
    fn apply<'a>(
        _odm: &'a Odm,
        _collection: &'static str,
        _noted: Self::Noted,
        _absent: &'a Absent,
        _out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        done()
    }

    /// Once every collection's events are applied: what spans them, after `settle` when it
    /// must look again at what it found.
    fn finish<'a>(
        _odm: &'a Odm,
        _batch: Self::Batch,
        _settle: Duration,
        _out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        done()
    }

    /// When the follower's stored position is no longer in the server's history (the events
    /// it missed are gone): repairs what it maintains of the `watched` collections from what
    /// they hold now. Run once the stream is open at the present, so that nothing written
    /// during the sweep is missed.
    fn lost<'a>(_odm: &'a Odm, _watched: &'a [&'static str]) -> BoxFuture<'a, Result<Self::Swept>> {
        Box::pin(std::future::ready(Ok(Self::Swept::default())))
    }
}
