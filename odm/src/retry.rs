//! The transactions the ODM opens for the caller, retried when the server says to.
//!
//! A `reassign`, a delete with rules, a cascade in a transaction and a latest-N recomputation
//! each run as one transaction the ODM starts itself. Concurrent transactions on the same
//! documents conflict; the server then aborts all but one with a write conflict labelled
//! `TransientTransactionError`, which means "run the whole transaction again". This module is
//! the one place that does so: a fresh session and transaction per attempt, exponential backoff
//! with jitter between attempts, the commit retried alone on `UnknownTransactionCommitResult`,
//! and an overall deadline ([`Odm::retry_deadline`]) after which the last error is returned.
//!
//! Nothing else is retried: an error that is not [`Error::is_transient`] (a refused delete, a
//! full array, a server that cannot be reached, ...) ends the operation at once. A caller's own
//! session is never retried either: the ODM cannot re-run the caller's earlier work in it, so
//! the error goes back with its labels for the caller to classify.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

use mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT;
use mongodb::ClientSession;

use crate::populate::BoxFuture;
use crate::{Error, Odm, Result};

/// First backoff, before jitter; each attempt multiplies it by 1.5, up to [`BACKOFF_MAX`].
const BACKOFF_INITIAL: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// Runs `body` in a transaction of its own and commits it, running the whole transaction again
/// on transient errors (write conflicts) and the commit again on an unknown commit result,
/// until [`Odm::retry_deadline`] has passed.
///
/// `body` gets the session and `context` (whatever it needs from the caller, borrowed for
/// the attempt): a closure capturing borrows could not hand them to a future that also
/// borrows the session.
///
/// Commands: per attempt, those of `body` then `commitTransaction` (or `abortTransaction`
/// after an error of `body`, unless the server could not be reached or the connection broke).
pub(crate) async fn in_transaction<C, T, F>(odm: &Odm, context: &C, mut body: F) -> Result<T>
where
    C: Sync + ?Sized,
    T: Send,
    F: for<'s> FnMut(&'s Odm, &'s mut ClientSession, &'s C) -> BoxFuture<'s, Result<T>>,
{
    let start = Instant::now();
    let deadline = odm.retry_deadline();
    let mut attempt: u32 = 0;
    'transaction: loop {
        attempt += 1;
        let mut session = odm.client().start_session().await?;
        session.start_transaction().await?;
        let value = match body(odm, &mut session, context).await {
            Ok(value) => value,
            Err(e) => {
                if worth_aborting(&e) {
                    let _ = session.abort_transaction().await;
                }
                if e.is_transient() && wait(start, deadline, attempt).await {
                    continue 'transaction;
                }
                return Err(e);
            }
        };
        loop {
            let e = match session.commit_transaction().await {
                Ok(()) => return Ok(value),
                Err(e) => Error::from(e),
            };
            if e.has_label(UNKNOWN_TRANSACTION_COMMIT_RESULT)
                && !e.is_unreachable()
                && start.elapsed() < deadline
            {
                // The commit may or may not have landed: committing again is safe (the server
                // answers for the same transaction) and decides it.
                continue;
            }
            if e.is_transient() && wait(start, deadline, attempt).await {
                continue 'transaction;
            }
            return Err(e);
        }
    }
}

/// Whether to send `abortTransaction` after `e`: not when the server could not be reached or
/// the connection broke, where it would only wait for a server again (the driver still aborts
/// the dropped session's transaction in the background, and the server times it out anyway).
fn worth_aborting(e: &Error) -> bool {
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

/// Sleeps the backoff of `attempt` and returns true, or returns false when sleeping would pass
/// the deadline.
async fn wait(start: Instant, deadline: Duration, attempt: u32) -> bool {
    let backoff = backoff(attempt);
    if start.elapsed() + backoff >= deadline {
        return false;
    }
    tokio::time::sleep(backoff).await;
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
