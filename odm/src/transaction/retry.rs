//! The transactions the ODM opens for the caller, retried when the server says to.
//!
//! A `reassign`, a delete with rules, a cascade in a transaction and a latest-N recomputation
//! each run as one transaction the ODM starts itself. Concurrent transactions on the same
//! documents conflict; the server then aborts all but one with a write conflict labelled
//! `TransientTransactionError`, which means "run the whole transaction again". This module is
//! the one place that does so: a fresh session and transaction per attempt, exponential backoff
//! with jitter between attempts, the commit retried alone on `UnknownTransactionCommitResult`,
//! and an overall deadline ([`Odm::retry_deadline`]) after which the last error is returned.
//! An attempt that met a write conflict on a write it can name queues its next attempts behind
//! the other writers of this process that met it (see [`crate::contention`]).
//!
//! Nothing else is retried: an error that is not [`Error::is_transient`] (a refused delete, a
//! full array, a server that cannot be reached, ...) ends the operation at once. A caller's own
//! session is never retried either: the ODM cannot re-run the caller's earlier work in it, so
//! the error goes back with its labels for the caller to classify.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

use mongodb::ClientSession;

use crate::{Error, Odm, Result};
use futures_util::future::BoxFuture;

/// First backoff, before jitter; each attempt multiplies it by 1.5, up to [`BACKOFF_MAX`].
const BACKOFF_INITIAL: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// The retry loop of every transaction the ODM runs, its own and the caller's
/// ([`Odm::transaction`]): a fresh session and transaction per attempt, the whole body again on
/// a transient error, the commit alone again on an unknown commit result, until the deadline.
///
/// A macro rather than a function taking the body, so that each use is one plain `async fn`:
/// the caller's body is an async closure whose future cannot be named, and so could not be
/// boxed as `Send` by a function; expanded in place, its `Send`-ness is the body's own.
///
/// `$tx` (a [`Tx`]: the attempt's session, with a transaction started) is in scope of `$body`,
/// an expression giving the attempt's `Result`.
macro_rules! transaction_loop {
    ($odm:expr, $operation:expr, |$tx:ident| $body:expr) => {{
        let odm: &$crate::Odm = $odm;
        let start = ::std::time::Instant::now();
        let deadline = odm.retry_deadline();
        let mut attempt: u32 = 0;
        // The lock of the write this operation last conflicted on (see `crate::contention`).
        let mut held: Option<$crate::contention::Held> = None;
        'transaction: loop {
            attempt += 1;
            let mut $tx = $crate::transaction::Tx::begin(odm, $operation, attempt).await?;
            let value = match $body {
                Ok(value) => value,
                Err(e) => {
                    let e = $crate::transaction::unsupported($operation, e);
                    if $crate::transaction::worth_aborting(&e) {
                        let _ = $tx.session.abort_transaction().await;
                    } else if e.is_outcome_unknown() {
                        $crate::transaction::cut_off(odm, &$tx.session);
                    }
                    if e.is_transient()
                        && ($crate::contention::queue_behind(
                            &odm.contention,
                            &mut held,
                            &e,
                            start,
                            deadline,
                        )
                        .await
                            || $crate::transaction::wait(start, deadline, attempt).await)
                    {
                        continue 'transaction;
                    }
                    break 'transaction Err(e);
                }
            };
            loop {
                let e = match $tx.session.commit_transaction().await {
                    Ok(()) => break 'transaction Ok(value),
                    Err(e) => $crate::Error::from(e),
                };
                if e.has_label(::mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT)
                    && !e.is_unreachable()
                    && start.elapsed() < deadline
                {
                    // The commit may or may not have landed: committing again is safe (the
                    // server answers for the same transaction) and decides it.
                    continue;
                }
                if e.is_transient() && $crate::transaction::wait(start, deadline, attempt).await {
                    continue 'transaction;
                }
                break 'transaction Err(e);
            }
        }
    }};
}
pub(crate) use transaction_loop;

/// Runs `body` in a transaction of its own and commits it, running the whole transaction again
/// on transient errors (write conflicts) and the commit again on an unknown commit result,
/// until [`Odm::retry_deadline`] has passed (see [`transaction_loop`]).
///
/// `body` gets the session and `context` (whatever it needs from the caller, borrowed for
/// the attempt): a closure capturing borrows could not hand them to a future that also
/// borrows the session.
///
/// Commands: per attempt, those of `body` then `commitTransaction` (or `abortTransaction`
/// after an error of `body`, unless the server could not be reached or the connection broke:
/// when the command's outcome is unknown, the next transaction of the handle sends one
/// `killSessions` alongside, see [`Tx::begin`]).
/// On a deployment without transactions, [`Error::TransactionsUnsupported`] before any.
pub(crate) async fn in_transaction<C, T, F>(odm: &Odm, context: &C, mut body: F) -> Result<T>
where
    C: Sync + ?Sized,
    T: Send,
    F: for<'s> FnMut(&'s Odm, &'s mut ClientSession, &'s C) -> BoxFuture<'s, Result<T>>,
{
    transaction_loop!(odm, "this operation", |tx| body(
        odm,
        &mut tx.session,
        context
    )
    .await)
}

/// One attempt of a transaction: a session with a transaction started, handed to the body of
/// [`Odm::transaction`]. Give [`Tx::session`] to every operation of the body
/// (`.session(tx.session())`), so that it runs in the transaction; an operation that would
/// open a transaction of its own (a `reassign`, a delete with rules, a tree move, ...) runs its
/// commands in this one instead.
#[derive(Debug)]
pub struct Tx {
    pub(crate) session: ClientSession,
    attempt: u32,
}

impl Tx {
    /// A session with a transaction started. Sends no command (the driver sends the
    /// transaction's options with its first command); a deployment without transactions is
    /// [`Error::TransactionsUnsupported`] (the driver tells it from the server's `hello`).
    ///
    /// When an earlier transaction of this handle (or of a clone) was cut off (its connection
    /// broke, or the server stopped answering, with its writes possibly applied and never
    /// committed), one `killSessions` of those sessions is sent alongside, without waiting for
    /// it: the server would otherwise keep their transactions open, holding their documents
    /// against every other transaction, until its transaction lifetime limit (60 s by
    /// default). A transaction that meets them meanwhile gets a write conflict and is run
    /// again. Best effort: on failure (the server is still away), they are kept for the next
    /// transaction.
    pub(crate) async fn begin(odm: &Odm, operation: &str, attempt: u32) -> Result<Tx> {
        end_cut_off(odm);
        let mut session = odm.client().start_session().await?;
        let started = match odm.transaction_options() {
            None => session.start_transaction().await,
            Some(options) => session.start_transaction().with_options(options).await,
        };
        match started {
            Ok(()) => Ok(Tx { session, attempt }),
            Err(e) => Err(unsupported(operation, Error::from(e))),
        }
    }

    /// The attempt's session, in which the transaction runs: pass it to each operation with
    /// `.session(tx.session())`.
    pub fn session(&mut self) -> &mut ClientSession {
        &mut self.session
    }

    /// Which attempt this is: 1 for the first, 2 after one transient error, ...
    pub fn attempt(&self) -> u32 {
        self.attempt
    }
}

/// [`Error::TransactionsUnsupported`] for the driver's refusal to start a transaction on a
/// standalone server (or the server's own, code 20, when the driver took it for a replica set
/// member); any other error as it is.
pub(crate) fn unsupported(operation: &str, e: Error) -> Error {
    use mongodb::error::ErrorKind;
    let message = e.driver_error().and_then(|d| match &*d.kind {
        ErrorKind::Transaction { message, .. }
            if message.contains("not supported by this deployment") =>
        {
            Some(message.clone())
        }
        ErrorKind::Command(c)
            if c.code == 20
                && c.message
                    .contains("only allowed on a replica set member or mongos") =>
        {
            Some(c.message.clone())
        }
        _ => None,
    });
    match message {
        Some(message) => Error::TransactionsUnsupported {
            operation: operation.to_owned(),
            message,
        },
        None => e,
    }
}

/// Notes `session` as left open by a transaction that was cut off: the next transaction of the
/// handle ends it first ([`Tx::begin`]).
pub(crate) fn cut_off(odm: &Odm, session: &ClientSession) {
    cut_off_sessions(odm).push(session.id().clone());
}

fn cut_off_sessions(odm: &Odm) -> std::sync::MutexGuard<'_, Vec<bson::Document>> {
    odm.cut_off
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Ends the sessions [`cut_off`] noted, with one `killSessions` sent by a task of its own (so
/// that a server still away delays no transaction by a server selection timeout); keeps them
/// when it fails. One such task at a time: it takes the sessions while it runs.
fn end_cut_off(odm: &Odm) {
    let sessions = std::mem::take(&mut *cut_off_sessions(odm));
    if sessions.is_empty() {
        return;
    }
    let odm = odm.clone();
    tokio::spawn(async move {
        let killed = odm
            .client()
            .database("admin")
            .run_command(bson::doc! { "killSessions": sessions.clone() })
            .await;
        // Kept only while the server is away; a server that refuses the command (without
        // `killSessions`, or without the right) times the transactions out itself.
        if killed.is_err_and(|e| !worth_aborting(&Error::from(e))) {
            cut_off_sessions(&odm).extend(sessions);
        }
    });
}

/// Whether to send `abortTransaction` after `e`: not when the server could not be reached or
/// the connection broke, where it would only wait for a server again (the driver still aborts
/// the dropped session's transaction in the background, and the server times it out anyway).
pub(crate) fn worth_aborting(e: &Error) -> bool {
    use mongodb::error::ErrorKind;
    !e.driver_error().is_some_and(|d| {
        matches!(
            *d.kind,
            ErrorKind::ServerSelection { .. }
                | ErrorKind::Io(_)
                | ErrorKind::ConnectionPoolCleared { .. }
        )
    })
}

/// Sleeps the backoff of `attempt`, cut short at the deadline, and returns true; returns false
/// once the deadline has passed. A backoff longer than the time left does not end the retries
/// early: the last attempt runs at the deadline.
pub(crate) async fn wait(start: Instant, deadline: Duration, attempt: u32) -> bool {
    let Some(left) = deadline
        .checked_sub(start.elapsed())
        .filter(|l| !l.is_zero())
    else {
        return false;
    };
    tokio::time::sleep(backoff(attempt).min(left)).await;
    true
}

/// Exponential backoff with full jitter: contenders that conflicted once spread out instead of
/// conflicting again at the same instant.
fn backoff(attempt: u32) -> Duration {
    let ceiling = BACKOFF_INITIAL
        .mul_f64(1.5f64.powi(attempt.min(30) as i32))
        .min(BACKOFF_MAX);
    ceiling.mul_f64(jitter())
}

/// A number in `[0, 1)`, different for every call.
fn jitter() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        for attempt in 1..60 {
            let b = backoff(attempt);
            assert!(b <= BACKOFF_MAX, "{b:?}");
            let ceiling = BACKOFF_INITIAL.mul_f64(1.5f64.powi(attempt.min(30) as i32));
            assert!(b <= ceiling, "{b:?} > {ceiling:?}");
        }
    }

    #[test]
    fn jitter_is_in_the_unit_interval() {
        for _ in 0..1000 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
