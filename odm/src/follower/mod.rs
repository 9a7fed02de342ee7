//! Writes from other programs: a follower that watches the collections the catalog says are
//! the sources of something and applies to writes made outside odm the maintenance odm applies
//! to its own (see the guide's "Writes from other programs").
//!
//! - A change of a copied field cascades to its copies (only when a copied field is among the
//!   changed ones); a copy cascaded in the background gets its intent recorded.
//! - A delete has its rules applied: `nullify`, `pull`, `cascade`, and the summaries of the
//!   deleted documents taken out. A `restrict` rule cannot refuse what is already done: the
//!   holders it finds are left as they are and reported ([`FollowerReport::violations`], with
//!   the deleted ids and the holders' ids).
//! - An insert, delete, or move (a change of the reference) of a source of latest-N arrays
//!   recomputes the arrays of the parents it was in and is in.
//! - A write of a tree node's `parent` (or an insert or replacement of a node) rewrites the
//!   ancestors of the node and of its whole subtree; a node whose `parent` is no node is
//!   reported ([`FollowerReport::bad_documents`]) and left as it is.
//! - A delete of a tree node applies the tree's delete rule (`lift`, `cascade`; the children
//!   a `restrict` rule finds are reported in [`FollowerReport::violations`]).
//! - A change of a two-way reference's child (its reference written, or the child inserted,
//!   replaced or deleted) lists it in the array of the parent it names and in no other.
//! - A delete of the main side of a subset pair deletes its details, as an ODM delete of the
//!   pair does; one side of a pair written alone is finished after
//!   [`Follower::pair_settle`]: details without their main document deleted, a main document
//!   without details reported.
//!
//! The change stream reads only what it needs: a `$match` on the watched collections and the
//! four kinds of writes (deletes only for a collection watched for its delete rules, inserts
//! and deletes for a side of a subset pair), and a `$project` keeping each event's token,
//! kind, collection, key, time and the names of the fields an update changed (never a
//! document).
//!
//! **Deletes are checked against the present.** A delete event says what was true when it
//! was written: before the effects of a batch's deletes (delete rules, subset details, a
//! tree's rule), one `find` per collection (`_id: {$in: ids}`, projecting `_id`) keeps the ids
//! absent now. A document another program deleted, then inserted again with the same `_id`
//! (in the same batch, before a later one, or before the events are read again) is left with
//! everything that hangs on it; and the follower never deletes the deleted documents
//! themselves again, so one inserted again while their rules are applied is left too. The
//! other effects already read the present state (below).
//!
//! **Exactly-once effect.** The position (the change stream's resume token) is stored in
//! [`FOLLOWER`] after the effects of every event before it are written. Every effect reads the
//! present state and writes what differs from it (the copies are set to the source's current
//! values, the arrays recomputed, the ancestors rewritten from the parent chain, the rules
//! read what still references the deleted ids), so an event applied again after a crash
//! between its effect and the stored position changes nothing, and neither does an event of
//! odm's own writes, whose effects are already in place. One follower per deployment holds a
//! lease in the same document, its end set and compared on the server's clock (`$$NOW`); a
//! second one waits, and a follower that lost its lease (paused
//! past it) stores no position again. Each store requires the count of stores the follower
//! last wrote: when a server killed before its writes were durable lost the follower's last
//! positions, the follower notices ([`FollowerReport::rolled_back`]) and reads again from the
//! position the server kept, instead of going on from the one it holds in memory.
//!
//! **History lost.** When the stored position is no longer in the server's history, the
//! follower opens the stream at the present, stores that position, then runs the repairing
//! sweeps of what it maintains (copies, trees, references to deleted documents, subset
//! pairs) and reports what they repaired ([`FollowerReport::history_lost`]): it never skips
//! silently.
//!
//! A standalone server has no change streams: [`Error::ChangeStreamsUnavailable`](crate::Error::ChangeStreamsUnavailable).

mod apply;
mod lost;
mod state;
mod status;
mod watch;
pub(crate) use watch::refusal;

use std::time::Duration;

use bson::oid::ObjectId;
use bson::Document;
use mongodb::change_stream::event::ResumeToken;
use mongodb::change_stream::ChangeStream;

pub use lost::HistoryLost;
pub use status::{FollowerStatus, COUNTED};

use crate::error::DeleteRestricted;
use crate::{Odm, Result};

/// The collection holding the follower's position and lease.
pub const FOLLOWER: &str = "odm_follower";

/// What a follower's run did.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct FollowerReport {
    /// Events read from the change stream.
    pub events: u64,
    /// Of those, the events that called for some maintenance.
    pub relevant: u64,
    /// Source documents whose copies were cascaded.
    pub cascaded: u64,
    /// Deleted documents whose delete rules were applied.
    pub deleted: u64,
    /// Parents whose latest-N arrays were recomputed.
    pub latest_parents: u64,
    /// Tree nodes whose ancestors were rewritten (moved, or below a node deleted under the
    /// `lift` rule).
    pub tree_nodes: u64,
    /// Tree nodes deleted because a node above them was (the `cascade` rule).
    pub tree_deleted: u64,
    /// Parents of two-way references whose array of children was written (a child another
    /// program moved, inserted or deleted added or pulled).
    pub two_way_parents: u64,
    /// Details of subset pairs deleted with their main documents.
    pub details_deleted: u64,
    /// Tree nodes moved under their own subtree, left as they are.
    pub tree_cycles: Vec<bson::Bson>,
    /// `restrict` rules the deletes of other programs broke: the holders left referencing
    /// deleted documents, counted, and named (the first
    /// [`DeleteRestricted::LISTED`] deleted ids and holders' ids).
    pub violations: Vec<DeleteRestricted>,
    /// The stored position was lost: what the repairing sweeps found and did.
    pub history_lost: Option<HistoryLost>,
    /// Another follower holds the lease: this one did nothing.
    pub elsewhere: bool,
    /// This follower lost its lease during the run (it stores no position again).
    pub lease_lost: bool,
    /// Documents of other programs the follower could not apply: a source whose copied value
    /// has a type its copy cannot hold (its copies left as they are; a source of a latest-N
    /// array left out of it), a holder whose copy the server refused (it would pass 16 MB:
    /// the holder left as it is, the other holders written), a tree node whose
    /// `parent` is no node (left with its subtree), the parent of a two-way reference whose
    /// array of children is not an array or is full (the child left out of it), a main
    /// document of a subset pair without details (path `_id`). The other events were applied,
    /// and the position moved on. The next write of such a document is followed again; the
    /// sweeps (`verify_copies`, the tree's, `verify_inverse`, the pair's) find what is left.
    pub bad_documents: Vec<BadDocument>,
    /// The stored position went back during the run: the server lost writes it had
    /// acknowledged (it was killed before they were durable), this follower's last stored
    /// positions among them. The run ended there; the next goes on from the stored position,
    /// so that the events after it are read again rather than skipped.
    pub rolled_back: bool,
}

pub use crate::engine::BadDocument;

impl FollowerReport {
    /// Adds what the features applied of a batch.
    fn add(&mut self, applied: crate::engine::Applied) {
        self.cascaded += applied.cascaded;
        self.deleted += applied.deleted;
        self.latest_parents += applied.latest_parents;
        self.tree_nodes += applied.tree_nodes;
        self.tree_deleted += applied.tree_deleted;
        self.two_way_parents += applied.two_way_parents;
        self.details_deleted += applied.details_deleted;
        self.tree_cycles.extend(applied.tree_cycles);
        self.violations.extend(applied.violations);
        self.bad_documents.extend(applied.bad_documents);
    }
}

/// A follower of the writes other programs make (see the [module](self)). Built by
/// [`Odm::follower`]; call [`run`](Follower::run) in a task of its own, or
/// [`run_until_idle`](Follower::run_until_idle) from a job or a test.
#[derive(Debug)]
pub struct Follower {
    config: Config,
    stream: Option<ChangeStream<Document>>,
}

/// A follower's settings and identity: what its steps read while the stream is being read.
#[derive(Debug, Clone)]
struct Config {
    odm: Odm,
    owner: ObjectId,
    /// The count of stored positions as this follower last read or wrote it.
    stores: std::sync::Arc<std::sync::atomic::AtomicI64>,
    lease: Duration,
    batch: u32,
    wait: Duration,
    settle: Duration,
}

impl Odm {
    /// A follower of the writes other programs make to the sources of this handle's catalog.
    /// Sends nothing.
    ///
    /// ```no_run
    /// # async fn run(odm: &odm::Odm) -> odm::Result<()> {
    /// // In a task of its own, for the life of the application.
    /// let following = tokio::spawn(odm.follower().run());
    /// # let _ = following;
    /// # Ok(())
    /// # }
    /// ```
    pub fn follower(&self) -> Follower {
        Follower {
            config: Config {
                odm: self.clone(),
                owner: ObjectId::new(),
                stores: Default::default(),
                lease: Duration::from_secs(30),
                batch: 500,
                wait: Duration::from_millis(500),
                settle: Duration::from_secs(1),
            },
            stream: None,
        }
    }
}

impl Follower {
    /// How long the lease holds without news from this follower (30 s by default): each
    /// stored position extends it; a follower that died is taken over once it expires.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.config.lease = lease;
        self
    }

    /// Events applied together (500 by default, at least 1): their effects are written, then
    /// the position after them.
    pub fn batch_size(mut self, n: u32) -> Self {
        self.config.batch = n.max(1);
        self
    }

    /// How long the server holds a read of the stream when there is no event (500 ms by
    /// default): the longest [`run_until_idle`](Follower::run_until_idle) waits for one.
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.config.wait = wait;
        self
    }

    /// How long a side of a subset pair found alone (details without their main document, a
    /// main document without details) is given to be joined by the other before the follower
    /// acts (1 s by default): odm's own pair insert without a transaction writes the details,
    /// then the main document. Details still alone then are deleted, as
    /// [`SubsetPair::repair`](crate::subset::SubsetPair::repair) deletes them; a main document
    /// still alone is reported in [`FollowerReport::bad_documents`].
    pub fn pair_settle(mut self, settle: Duration) -> Self {
        self.config.settle = settle;
        self
    }

    /// Follows for ever. When another follower holds the lease, waits and tries again. When
    /// the server is lost, logs it (`tracing`, target `odm`, level `warn`) and goes on from the
    /// stored position once it answers. Returns only on any other error.
    pub async fn run(mut self) -> Result<std::convert::Infallible> {
        loop {
            match self.run_until_idle().await {
                Ok(r) if r.elsewhere || r.lease_lost => {
                    tokio::time::sleep(self.config.lease / 4).await;
                }
                Ok(r) if r.rolled_back => {
                    tracing::warn!(target: "odm", "follower: the server lost acknowledged writes; going on from the stored position");
                }
                Ok(_) => {}
                Err(e) if e.is_outcome_unknown() || e.is_unreachable() => {
                    tracing::warn!(target: "odm", error = %e, "follower: the server was lost; going on when it answers");
                    self.stream = None;
                    tokio::time::sleep(self.config.wait).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Applies the events of other programs' writes until there is none for
    /// [`max_wait`](Follower::max_wait), storing the position after each batch, and reports
    /// what it did. Does nothing when another follower holds the lease
    /// ([`FollowerReport::elsewhere`]). On an error (no change streams, the server's refusal)
    /// it gives the lease back before returning it: no follower holds a lease without a
    /// stream.
    ///
    /// Commands: one `findAndModify` taking the lease; the change stream's `aggregate` (once)
    /// and `getMore`s; per batch, the effects' commands (see the [module](self)) and one
    /// `update` storing the position; on an error, one `update` giving the lease back.
    pub async fn run_until_idle(&mut self) -> Result<FollowerReport> {
        let span = crate::trace::operation_span!("follower", "*");
        crate::trace::traced(span, self.follow(), |r: &FollowerReport| Some(r.events)).await
    }

    async fn follow(&mut self) -> Result<FollowerReport> {
        let mut report = FollowerReport::default();
        let config = self.config.clone();
        let watched = watch::watched(config.odm.catalog());
        if watched.is_empty() {
            return Ok(report);
        }
        let Some(stored) = state::acquire(&config.odm, config.owner, config.lease).await? else {
            self.stream = None;
            report.elsewhere = true;
            return Ok(report);
        };
        match self
            .follow_holding(&config, &watched, stored, &mut report)
            .await
        {
            Ok(()) => Ok(report),
            Err(e) => {
                // No lease without a stream: on any error the lease goes back at once, so that
                // the next follower (this one again, or another) is not kept waiting for it to
                // expire. A server that cannot be reached cannot take it back either: it then
                // expires.
                self.stream = None;
                if let Err(release) = state::release(&config.odm, config.owner).await {
                    tracing::debug!(target: "odm", error = %release, "follower: the lease could not be given back");
                }
                Err(e)
            }
        }
    }

    /// The run once the lease is held: the stream opened (or read on), batch after batch until
    /// idle. Leaves the stream in `self` when it ends cleanly.
    async fn follow_holding(
        &mut self,
        config: &Config,
        watched: &[watch::Watched],
        stored: state::Stored,
        report: &mut FollowerReport,
    ) -> Result<()> {
        // The stream read on from where this follower stored its last position: when the
        // document counts other stores (the server lost this follower's last ones, or another
        // follower went on meanwhile), it goes on from the stored position instead.
        let known = config
            .stores
            .swap(stored.stores, std::sync::atomic::Ordering::Relaxed);
        if known != stored.stores {
            self.stream = None;
        }
        let mut stream = match self.stream.take() {
            Some(s) => s,
            None => config.open(watched, stored.token, report).await?,
        };
        let mut fresh = true;
        let mut progress = config.odm.track(
            crate::progress::Task::Follow,
            crate::progress::Unit::Events,
            || "other programs' writes".to_owned(),
            None,
        );
        loop {
            let before = report.events;
            let batch = config.batch(&mut stream, watched, report, &mut fresh).await;
            progress.advance(report.events.saturating_sub(before));
            match batch {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) if watch::is_history_lost(&e) => {
                    stream = config.open(watched, None, report).await?;
                    report.history_lost = Some(lost::repair(&config.odm, watched, e).await?);
                }
                Err(e) => return Err(e),
            }
            if report.lease_lost || report.rolled_back {
                progress.finish();
                return Ok(());
            }
        }
        progress.finish();
        self.stream = Some(stream);
        Ok(())
    }

    /// Stops following: gives the lease up, so that another follower takes over at once.
    /// One `update`.
    pub async fn stop(self) -> Result<()> {
        state::release(&self.config.odm, self.config.owner).await
    }
}

impl Config {
    /// The stream after `token`; when that position is lost, the stream at the present, its
    /// position stored, and the sweeps run (recorded in `report`).
    async fn open(
        &self,
        watched: &[watch::Watched],
        token: Option<ResumeToken>,
        report: &mut FollowerReport,
    ) -> Result<ChangeStream<Document>> {
        let resuming = token.is_some();
        match watch::open(&self.odm, watched, token, self.batch, self.wait).await {
            Err(e) if resuming && watch::is_history_lost(&e) => {
                let stream = watch::open(&self.odm, watched, None, self.batch, self.wait).await?;
                self.store(stream.resume_token(), 0, None, report).await?;
                report.history_lost = Some(lost::repair(&self.odm, watched, e).await?);
                Ok(stream)
            }
            Err(e) => Err(e),
            Ok(stream) => {
                if !resuming {
                    // The first run: the present is the position to resume from.
                    self.store(stream.resume_token(), 0, None, report).await?;
                }
                Ok(stream)
            }
        }
    }

    /// Stores the stream's position after `applied` events; notes a lost lease.
    async fn store(
        &self,
        token: Option<ResumeToken>,
        applied: u64,
        through: Option<bson::DateTime>,
        report: &mut FollowerReport,
    ) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        let stores = self.stores.load(Relaxed);
        let advanced = state::advance(
            &self.odm,
            self.owner,
            self.lease,
            stores,
            token.as_ref(),
            applied,
            through,
        )
        .await?;
        match advanced {
            state::Advanced::Stored => self.stores.store(stores + 1, Relaxed),
            state::Advanced::LeaseLost => report.lease_lost = true,
            state::Advanced::RolledBack => report.rolled_back = true,
        }
        Ok(())
    }

    /// Reads one batch of events, applies it and stores the position after it. `false` when
    /// there was no event: a read found none and the position did not move (or moved for
    /// [`MAX_PASSED`] reads in a row, other collections' writes only).
    ///
    /// A read may find no event while the server has more history to look through (it scans
    /// a bounded number of entries per read, most of them writes the pipeline leaves out): the
    /// position then moves, and reading goes on.
    async fn batch(
        &self,
        stream: &mut ChangeStream<Document>,
        watched: &[watch::Watched],
        report: &mut FollowerReport,
        fresh: &mut bool,
    ) -> Result<bool> {
        let odm = &self.odm;
        let mut batch = apply::Batch::new(self.settle);
        let mut read = 0u64;
        let mut through = None;
        let mut at = position(stream);
        let mut passed = 0;
        while read < u64::from(self.batch) {
            let next = stream
                .next_if_any()
                .await
                .map_err(|e| watch::refusal(odm, e))?;
            let Some(event) = next else {
                // The first read after opening answers from the opening's empty batch.
                if std::mem::take(fresh) && read == 0 {
                    continue;
                }
                let now = position(stream);
                if now == at || read > 0 || passed >= MAX_PASSED {
                    break;
                }
                // No event, but further on: go on reading.
                at = now;
                passed += 1;
                continue;
            };
            *fresh = false;
            read += 1;
            through = event.get_datetime("wallTime").ok().copied().or(through);
            let collection = event
                .get_document("ns")
                .ok()
                .and_then(|ns| ns.get_str("coll").ok());
            let Some(w) = watched.iter().find(|w| Some(w.collection) == collection) else {
                continue;
            };
            if batch.note(odm, w, &event) {
                report.relevant += 1;
            }
        }
        report.events += read;
        batch.apply(odm, report).await?;
        self.store(stream.resume_token(), read, through, report)
            .await?;
        Ok(read > 0)
    }
}

/// Reads in a row that find no event but move the position, after which a run stops as idle:
/// a database busy with writes the follower does not watch still ends a `run_until_idle`.
const MAX_PASSED: u32 = 100;

/// The stream's position, comparable: its resume token as a document.
fn position(stream: &ChangeStream<Document>) -> Option<bson::Bson> {
    stream
        .resume_token()
        .and_then(|t| bson::serialize_to_bson(&t).ok())
}
