//! Writers of this process that keep conflicting on one document wait for each other instead.
//!
//! Many operations of one process whose transactions end on the same document (deletes of the
//! log messages that feed one host's latest-N array, tasks reassigned to one owner) conflict
//! on it: the server aborts all but one with a write conflict, and each runs its whole
//! transaction again. With tens of writers, most retries collide again, and on a busy machine
//! many reach the retry deadline without ever committing.
//!
//! So a transaction the ODM runs for itself that fails with a write conflict remembers the
//! write that met it (its collection and filter, as [`Error::Write`] names them; for a write
//! not by `_id`, the collection and the filter's first field), and holds a lock on that write,
//! in this process, for its next attempts. The other operations that
//! conflict on the same write queue behind it (first come, first served) and go one at a
//! time. An operation holds at most one such lock, taking it only between two attempts while
//! holding no other, so two operations never wait for each other. The first attempt takes no
//! lock: an operation that meets no contention pays nothing, not even a lookup.
//!
//! Writers in other processes are not ordered by this; they still meet the write conflicts
//! and retries with backoff of [`crate::retry`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::Error;

/// The lock of one contended write, held for an operation's remaining attempts.
pub(crate) type Held = (String, tokio::sync::OwnedMutexGuard<()>);

/// The locks of the contended writes of one `Odm` and its clones.
#[derive(Debug, Default)]
pub(crate) struct Contention {
    locks: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
}

/// Past this many entries, the locks nobody holds or waits for are forgotten.
const PRUNE_AT: usize = 1024;

impl Contention {
    /// Waits, at most `within`, for the lock of `key`; `None` when the wait timed out.
    pub(crate) async fn hold(&self, key: String, within: Duration) -> Option<Held> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            if locks.len() >= PRUNE_AT {
                locks.retain(|_, l| l.strong_count() > 0);
            }
            match locks.get(&key).and_then(Weak::upgrade) {
                Some(lock) => lock,
                None => {
                    let lock = Arc::new(tokio::sync::Mutex::new(()));
                    locks.insert(key.clone(), Arc::downgrade(&lock));
                    lock
                }
            }
        };
        let guard = tokio::time::timeout(within, lock.lock_owned()).await.ok()?;
        Some((key, guard))
    }
}

/// The write a write conflict met, as a lock's key (see [`key_of`]); for an error gathering
/// several (copies not updated, an incomplete cascade), the first conflict among them. `None`
/// for any other error, and for a conflict the error does not place (one met by the commit).
pub(crate) fn contended(e: &Error) -> Option<String> {
    match e {
        Error::Write {
            collection, target, ..
        } if e.is_write_conflict() => Some(key_of(collection, target)),
        Error::CopiesNotUpdated { failures, .. } | Error::Incomplete(failures) => {
            failures.iter().find_map(contended)
        }
        _ => None,
    }
}

/// The lock's key of a write on `collection` with the filter `target` (as [`Error::Write`]
/// shows it). A write by `_id` reaches the documents it names: its key is the whole filter, so
/// that writers of one parent queue together and writers of another go on. Any other write (a
/// cascade's `{parts.id: {$in: ..}}`) reaches documents its filter does not name, the
/// contended one among them: its key is the collection and the filter's first field, so that
/// the writers that met a conflict through that field queue together (renames of different
/// parts whose summaries live in one product).
fn key_of(collection: &str, target: &str) -> String {
    let first = target
        .trim_start_matches('{')
        .trim_start()
        .strip_prefix('"')
        .and_then(|t| t.split('"').next());
    match first {
        Some("_id") | None => format!("{collection} {target}"),
        Some(field) => format!("{collection} {field}"),
    }
}

/// Between two attempts of an operation: when `e` is a write conflict on a write other than
/// the one `held` names, the lock of that write instead, waited for until `deadline` from
/// `start` (the lock held before is let go first, so that no two operations wait for each
/// other). Returns whether the operation now holds a lock it did not hold before (its next
/// attempt may then go at once, without backing off).
pub(crate) async fn queue_behind(
    contention: &Contention,
    held: &mut Option<Held>,
    e: &Error,
    start: std::time::Instant,
    deadline: Duration,
) -> bool {
    let Some(key) = contended(e) else {
        return false;
    };
    if held.as_ref().is_some_and(|(k, _)| *k == key) {
        return false;
    }
    *held = None;
    let Some(left) = deadline.checked_sub(start.elapsed()) else {
        return false;
    };
    *held = contention.hold(key, left).await;
    held.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_by_id_is_its_own_key_any_other_its_collection_and_field() {
        let by_id = r#"{ "_id": ObjectId("65f0c0ffee00000000000001") }"#;
        assert_eq!(key_of("hosts", by_id), format!("hosts {by_id}"));
        let other = r#"{ "_id": 2 }"#;
        assert_ne!(key_of("hosts", by_id), key_of("hosts", other));
        let cascade = r#"{ "parts.id": { "$in": [ObjectId("65f0c0ffee00000000000002")] } }"#;
        let another = r#"{ "parts.id": { "$in": [ObjectId("65f0c0ffee00000000000003")] } }"#;
        assert_eq!(key_of("products", cascade), "products parts.id");
        assert_eq!(key_of("products", cascade), key_of("products", another));
        assert_eq!(key_of("products", "{}"), "products {}");
    }

    #[tokio::test]
    async fn one_holder_at_a_time_and_forgotten_when_free() {
        let c = Contention::default();
        let a = c
            .hold("hosts {_id: 1}".into(), Duration::from_secs(1))
            .await;
        assert!(a.is_some());
        let waited = c
            .hold("hosts {_id: 1}".into(), Duration::from_millis(20))
            .await;
        assert!(waited.is_none(), "held by the first");
        let other = c
            .hold("hosts {_id: 2}".into(), Duration::from_millis(20))
            .await;
        assert!(other.is_some(), "another write is free");
        drop(a);
        let again = c
            .hold("hosts {_id: 1}".into(), Duration::from_millis(20))
            .await;
        assert!(again.is_some(), "free once let go");
        drop((again, other));
        let locks = c.locks.lock().unwrap();
        assert!(locks.values().all(|l| l.strong_count() == 0));
    }
}
