//! The worker that applies the intents of background cascades.

mod apply;

pub(in crate::denormalize) use apply::sent;

use std::time::Duration;

use bson::oid::ObjectId;
use bson::{doc, Bson, Document};
use mongodb::options::IndexOptions;
use mongodb::{ClientSession, IndexModel};

use super::INTENTS;
use crate::engine::{Effect, Own, Returning};
use crate::{Error, Odm, Result};

/// Applies the intents of background cascades (see the module): build one with
/// [`Odm::cascade_worker`], then [`run`](CascadeWorker::run) it for the life of the
/// application, or [`run_until_idle`](CascadeWorker::run_until_idle) it from a job.
///
/// Commands, per intent: one `findAndModify` claiming it (the oldest unclaimed, or whose lease
/// expired), one `find` of the source's current values, then per copy one `find` cursor of
/// the dependents (their `_id`s only, one `getMore` per batch; on a first pass every dependent
/// of the source, on a resumed pass only those whose copy still differs) and per batch one
/// transaction: an `update` of the intent (still ours, same `seq`,
/// lease extended), one `update` of at most [`batch_size`](CascadeWorker::batch_size)
/// dependents whose copy differs (`_id` `$in` the batch, with array filters for arrays of
/// summaries),
/// `commitTransaction`; finally one `delete` of the intent. A worker holds at most one batch of
/// `_id`s in memory, whatever the number of copies.
#[derive(Debug)]
pub struct CascadeWorker {
    odm: Odm,
    batch: usize,
    lease: Duration,
    pause: Duration,
    poll: Duration,
    retry_failed: Duration,
    /// The intent being applied, between calls of `run_batches`.
    current: Option<Claimed>,
    /// The session every batch transaction of this worker runs in: recorded in the intents it
    /// claims, so that a worker taking one over can end a transaction left open by a dead one.
    session: Option<ClientSession>,
}

/// What one run of a worker did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct WorkerReport {
    /// Intents applied to the end (their source's copies all written) and deleted.
    pub applied: u64,
    /// Batches committed.
    pub batches: u64,
    /// Copies written (dependents modified).
    pub written: u64,
    /// The longest time between a write being recorded and its intent being applied to the
    /// end, over the intents this run applied: the lag the copies had.
    pub lag: Duration,
    /// Intents taken over by another worker while this one held them (its lease had expired):
    /// this worker wrote nothing more for them.
    pub lost: u64,
    /// Intents that could not be applied: a malformed intent or source value (a typed
    /// [`Error::Decode`] naming the document and field), a refused write. Each is recorded in
    /// its intent's `error` field and retried after
    /// [`retry_failed`](CascadeWorker::retry_failed).
    pub failed: Vec<Error>,
}

impl WorkerReport {
    fn add(&mut self, other: WorkerReport) {
        self.applied += other.applied;
        self.batches += other.batches;
        self.written += other.written;
        self.lag = self.lag.max(other.lag);
        self.lost += other.lost;
        self.failed.extend(other.failed);
    }
}

/// An intent this worker has claimed.
#[derive(Debug, Clone)]
struct Claimed {
    /// The intent's `_id`.
    key: Bson,
    /// The token its `claim` holds while it is ours.
    token: ObjectId,
}

impl Claimed {
    /// The intent, while it is ours (and at `seq`, when given).
    fn filter(&self, seq: Option<i64>) -> Document {
        let mut filter = crate::literal::eq("_id", self.key.clone());
        filter.insert("claim", self.token);
        if let Some(seq) = seq {
            filter.insert("seq", seq);
        }
        filter
    }
}

/// Why a pass over an intent stopped.
enum Pass {
    /// Every copy written and the intent deleted.
    Done,
    /// A newer write changed the intent's `seq`: read the source again.
    Stale,
    /// Another worker holds the intent now.
    Lost,
    /// The batch budget of this call ran out.
    Paused,
}

impl Odm {
    /// A worker applying background cascades (see [`CascadeWorker`]). Sends nothing.
    pub fn cascade_worker(&self) -> CascadeWorker {
        CascadeWorker {
            odm: self.clone(),
            batch: 1_000,
            lease: Duration::from_secs(30),
            pause: Duration::ZERO,
            poll: Duration::from_millis(200),
            retry_failed: Duration::from_secs(60),
            current: None,
            session: None,
        }
    }
}

impl CascadeWorker {
    /// Dependents written per batch (and transaction); 1,000 by default, at least 1.
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch = n.max(1);
        self
    }

    /// How long a claim holds without news from its worker (30 s by default): every batch
    /// extends it; a worker that died is taken over once it expires. Longer than a batch.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// A pause after each batch, to spread the load of a large cascade (none by default).
    pub fn pause(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }

    /// How long [`run`](CascadeWorker::run) sleeps when nothing is pending (200 ms by
    /// default): with the time a cascade takes, the bound of the copies' lag.
    pub fn poll_interval(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// How long an intent that failed waits before it is tried again (60 s by default).
    pub fn retry_failed(mut self, wait: Duration) -> Self {
        self.retry_failed = wait;
        self
    }

    /// Applies intents for ever, sleeping [`poll_interval`](CascadeWorker::poll_interval)
    /// whenever none is ready. An intent's own errors are recorded in it and retried. When the
    /// server is lost (no server to select, a connection cut, a server that stopped answering:
    /// [`Error::is_outcome_unknown`]) the worker keeps its claim, waits a poll interval and goes
    /// on where it stopped, as soon as the server answers again; each such error is logged
    /// (`tracing`, target `odm`, level `warn`). Returns only on any other error.
    pub async fn run(mut self) -> Result<std::convert::Infallible> {
        loop {
            match self.run_until_idle().await {
                Ok(_) => {}
                Err(e) if server_lost(&e) => {
                    tracing::warn!(target: "odm", error = %e, "cascade worker: the server was lost; going on when it answers");
                }
                Err(e) => return Err(e),
            }
            tokio::time::sleep(self.poll).await;
        }
    }

    /// Applies intents until none is ready to claim (pending intents claimed by a live worker,
    /// or failed and waiting to be retried, are left), and reports what it did.
    pub async fn run_until_idle(&mut self) -> Result<WorkerReport> {
        self.run_batches(usize::MAX).await
    }

    /// Like [`run_until_idle`](CascadeWorker::run_until_idle), but stops after `budget`
    /// batches, keeping its claim: the next call goes on where this one stopped (a job with a
    /// time slice; a test stopping between batches).
    pub async fn run_batches(&mut self, budget: usize) -> Result<WorkerReport> {
        let span = crate::trace::operation_span!("cascade_worker", "*");
        crate::trace::traced(
            span,
            self.run_batches_untraced(budget),
            |r: &WorkerReport| Some(r.written),
        )
        .await
    }

    async fn run_batches_untraced(&mut self, budget: usize) -> Result<WorkerReport> {
        let mut session = match self.session.take() {
            Some(s) => s,
            None => self.odm.client().start_session().await?,
        };
        let outcome = self.batches(&mut session, budget).await;
        self.session = Some(session);
        outcome
    }

    async fn batches(
        &mut self,
        session: &mut ClientSession,
        budget: usize,
    ) -> Result<WorkerReport> {
        let mut report = WorkerReport::default();
        let mut budget = budget;
        let mut progress = self.odm.track(
            crate::progress::Task::Worker,
            crate::progress::Unit::Intents,
            || "cascade intents".to_owned(),
            None,
        );
        loop {
            let claimed = match self.current.take() {
                Some(c) => c,
                None => match self.claim(session.id()).await? {
                    Some(c) => c,
                    None => {
                        progress.finish();
                        return Ok(report);
                    }
                },
            };
            let mut one = WorkerReport::default();
            match self.apply(session, &claimed, &mut budget, &mut one).await {
                Ok(Pass::Done) => one.applied += 1,
                Ok(Pass::Lost) => one.lost += 1,
                Ok(Pass::Stale) => self.current = Some(claimed),
                Ok(Pass::Paused) => {
                    self.current = Some(claimed);
                    report.add(one);
                    progress.finish();
                    return Ok(report);
                }
                Err(e) if is_own(&e) => {
                    if let Err(lost) = self.fail(&claimed, &e).await {
                        // The record of the error did not land: the claim is still this
                        // worker's, and the next call applies the intent again.
                        self.current = Some(claimed);
                        return Err(lost);
                    }
                    one.failed.push(e);
                }
                Err(e) => {
                    // The server was lost mid-batch (unreachable, a connection cut, a server
                    // that stopped answering): the claim is still this worker's, and the next
                    // call goes on with it instead of waiting for its lease to expire.
                    self.current = Some(claimed);
                    return Err(e);
                }
            }
            progress.advance(one.applied + one.lost + one.failed.len() as u64);
            report.add(one);
        }
    }

    /// Claims the oldest intent ready: unclaimed, or whose lease expired. One `find` of the
    /// candidate, then one `findAndModify` claiming it; when its last worker's lease expired,
    /// one `killSessions` first, which ends a transaction that worker left open (it would hold
    /// the intent until the server's transaction lifetime limit, 60 s by default).
    async fn claim(&self, session: &Document) -> Result<Option<Claimed>> {
        loop {
            let now = bson::DateTime::now();
            let ready = doc! { "$or": [
                { "lease": { "$exists": false } },
                { "lease": { "$lte": now } },
            ] };
            let candidate = intents(&self.odm)
                .find_one(ready.clone())
                .sort(doc! { "since": 1 })
                .projection(doc! { "_id": 1, "session": 1 })
                .await
                .map_err(|e| Error::from_driver(INTENTS, e))?;
            let Some(candidate) = candidate else {
                return Ok(None);
            };
            let key = candidate.get("_id").cloned().unwrap_or(Bson::Null);
            if let Some(Bson::Document(dead)) = candidate.get("session") {
                if dead != session {
                    // Best effort: a server without `killSessions` still ends the transaction
                    // at its lifetime limit.
                    let _ = self
                        .odm
                        .client()
                        .database("admin")
                        .run_command(doc! { "killSessions": [dead.clone()] })
                        .await;
                }
            }
            let token = ObjectId::new();
            let filter = doc! { "$and": [crate::literal::eq("_id", key.clone()), ready] };
            let claim = doc! { "$set": {
                "claim": token,
                "lease": self.lease_end(),
                "session": session.clone(),
            } };
            let claim = Own::update(INTENTS, filter, claim, Effect::Derived, "background claim");
            let returning = Returning::as_found(doc! { "_id": 1 });
            let found = self.odm.modify_own(claim.one(), returning, None).await?;
            if found.is_some() {
                return Ok(Some(Claimed { key, token }));
            }
            // Another worker claimed it in between: look again.
        }
    }

    fn lease_end(&self) -> bson::DateTime {
        let ms = i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX / 2);
        bson::DateTime::from_millis(bson::DateTime::now().timestamp_millis().saturating_add(ms))
    }

    /// Records an intent's own error in it and leaves it for
    /// [`retry_failed`](CascadeWorker::retry_failed). One `update`.
    async fn fail(&self, claimed: &Claimed, e: &Error) -> Result<()> {
        let ms = i64::try_from(self.retry_failed.as_millis()).unwrap_or(i64::MAX / 2);
        let until = bson::DateTime::from_millis(
            bson::DateTime::now().timestamp_millis().saturating_add(ms),
        );
        let error = doc! { "$set": { "error": e.to_string(), "lease": until } };
        let write = Own::update(
            INTENTS,
            claimed.filter(None),
            error,
            Effect::Derived,
            "background intent",
        );
        self.odm.write_own(write.one(), None).await.map(|_| ())
    }

    /// Creates the index the claims sort on (`since`), when missing. One `createIndexes`.
    pub async fn create_index(&self) -> Result<()> {
        let model = IndexModel::builder()
            .keys(doc! { "since": 1 })
            .options(IndexOptions::builder().name("since_1".to_owned()).build())
            .build();
        intents(&self.odm)
            .create_index(model)
            .await
            .map_err(|e| Error::from_driver(INTENTS, e))?;
        Ok(())
    }
}

/// Commits, again while the result is unknown (the server answers for the same transaction).
async fn commit(
    s: &mut ClientSession,
    start: std::time::Instant,
    deadline: Duration,
) -> Result<()> {
    loop {
        match s.commit_transaction().await {
            Ok(()) => return Ok(()),
            Err(e) => {
                let e = Error::from(e);
                if e.has_label(mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT)
                    && !e.is_unreachable()
                    && start.elapsed() < deadline
                {
                    continue;
                }
                return Err(e);
            }
        }
    }
}

fn intents(odm: &Odm) -> mongodb::Collection<Document> {
    odm.own_database().collection::<Document>(INTENTS)
}

/// Whether `e` says the server was lost (a connection cut, a server that stopped answering, no
/// server to select): the worker keeps its claim and goes on when it answers.
fn server_lost(e: &Error) -> bool {
    e.is_outcome_unknown() || e.is_unreachable()
}

/// Whether `e` belongs to one intent (recorded in it, the worker goes on) rather than to the
/// worker (returned). A write that failed because the server was lost (its outcome unknown, or
/// no server to select) is the worker's: the intent is not at fault, and recording the error
/// in it would need the server that was just lost.
fn is_own(e: &Error) -> bool {
    !server_lost(e)
        && matches!(
            e,
            Error::Decode { .. }
                | Error::Write { .. }
                | Error::Unsupported(_)
                | Error::DuplicateKey { .. }
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_failing_with(kind: mongodb::error::ErrorKind) -> Error {
        Error::from_write(INTENTS, || "{_id: 1}".to_owned(), kind.into())
    }

    #[test]
    fn a_write_the_server_was_lost_in_is_the_worker_s_error() {
        let cut = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut");
        let cut = write_failing_with(mongodb::error::ErrorKind::Io(std::sync::Arc::new(cut)));
        assert!(matches!(cut, Error::Write { .. }));
        assert!(!is_own(&cut), "a cut connection was recorded in the intent");
        let reply = doc! { "code": 2, "codeName": "BadValue", "errmsg": "refused" };
        let refused: mongodb::error::CommandError = bson::deserialize_from_document(reply).unwrap();
        let refused = write_failing_with(mongodb::error::ErrorKind::Command(refused));
        assert!(is_own(&refused), "a refused batch is the intent's error");
    }
}
