//! Errors made from the driver's, and told apart: duplicate keys, write conflicts, transient
//! errors, outcomes unknown.

use super::{show_id, Error};

const DUPLICATE_KEY: i32 = 11000;
const WRITE_CONFLICT: i32 = 112;
/// The server's code for a transaction it no longer has (aborted by a conflicting write).
const NO_SUCH_TRANSACTION: i32 = 251;
/// `MaxTimeMSExpired`: a command ended at its `maxTimeMS`.
const MAX_TIME_MS_EXPIRED: i32 = 50;

impl Error {
    /// Turns a driver error into the richest `odm` error it can be, given the collection the
    /// operation was on.
    pub(crate) fn from_driver(collection: &str, err: mongodb::error::Error) -> Self {
        use mongodb::error::{ErrorKind, WriteFailure};
        if let Some(r) = crate::refusal::refusal(&err) {
            return Error::DocumentInvalid {
                collection: collection.to_owned(),
                id: show_id(r.id.as_ref()),
                path: r.path,
                reason: r.reason,
                source: Box::new(err),
            };
        }
        let dup = match &*err.kind {
            ErrorKind::Write(WriteFailure::WriteError(we)) if we.code == DUPLICATE_KEY => {
                Some(we.message.clone())
            }
            ErrorKind::Command(ce) if ce.code == DUPLICATE_KEY => Some(ce.message.clone()),
            ErrorKind::InsertMany(im) => im
                .write_errors
                .as_ref()
                .and_then(|v| v.iter().find(|w| w.code == DUPLICATE_KEY))
                .map(|w| w.message.clone()),
            ErrorKind::BulkWrite(bw) => bw
                .write_errors
                .values()
                .find(|w| w.code == DUPLICATE_KEY)
                .map(|w| w.message.clone()),
            _ => None,
        };
        match dup {
            Some(message) => {
                let (index, key) = parse_duplicate_key(&message);
                Error::DuplicateKey {
                    collection: collection.to_owned(),
                    index,
                    key,
                    source: Box::new(err),
                }
            }
            None => Error::Driver(err),
        }
    }

    /// [`from_driver`](Error::from_driver) for a write: an error that is not a duplicate key
    /// names the collection and `target` (the `_id` or the filter written).
    pub(crate) fn from_write(
        collection: &str,
        target: impl FnOnce() -> String,
        err: mongodb::error::Error,
    ) -> Self {
        match Error::from_driver(collection, err) {
            Error::Driver(source) => Error::Write {
                collection: collection.to_owned(),
                target: target(),
                source: Box::new(source),
            },
            other => other,
        }
    }

    /// True when this is a duplicate-key error.
    pub fn is_duplicate_key(&self) -> bool {
        matches!(self, Error::DuplicateKey { .. })
    }

    /// The driver's error underneath, when the error came from the driver or the server.
    pub fn driver_error(&self) -> Option<&mongodb::error::Error> {
        match self {
            Error::Driver(e) => Some(e),
            Error::DuplicateKey { source, .. }
            | Error::Write { source, .. }
            | Error::DocumentInvalid { source, .. } => Some(source),
            _ => None,
        }
    }

    /// True when the server labelled the error with `label` (`TransientTransactionError`,
    /// `UnknownTransactionCommitResult`, `RetryableWriteError`, ...).
    pub fn has_label(&self, label: &str) -> bool {
        self.driver_error().is_some_and(|e| e.contains_label(label))
    }

    /// True when running the whole transaction again may succeed: the server labelled the error
    /// `TransientTransactionError` (a write conflict with a concurrent transaction, a failover),
    /// or it is a write conflict (code 112), or the server no longer has the transaction
    /// (`NoSuchTransaction`, code 251: a conflicting write aborted it, nothing of it committed;
    /// MongoDB labels it so, not every server does).
    ///
    /// Operations the ODM runs in transactions of its own already retry these (see the guide's
    /// error chapter); inside the caller's session they are returned, for the caller to abort
    /// and run its transaction again. A server that cannot be reached is never transient,
    /// although the driver labels it so inside a transaction: the attempt already waited the
    /// whole server selection timeout, and a retry would only wait it again.
    pub fn is_transient(&self) -> bool {
        !self.is_unreachable()
            && (self.has_label(mongodb::error::TRANSIENT_TRANSACTION_ERROR)
                || self.is_write_conflict()
                || self.server_code() == Some(NO_SUCH_TRANSACTION))
    }

    /// True when the command may or may not have run: the connection broke or was closed
    /// while the command was on its way or its reply was awaited (a network failure, a server
    /// that stopped answering and that the driver's monitor gave up on), or the server could
    /// not tell whether a commit happened (`UnknownTransactionCommitResult`).
    ///
    /// A write that ends so may still land later, when a server that was only paused resumes.
    /// Read the document back, or send the write again when running it twice is harmless (a
    /// `$set`, a replacement); a cascade that did not run is then run by the same update
    /// again, and [`Odm::verify_copies`](crate::Odm::verify_copies) finds the copies it left
    /// stale meanwhile.
    pub fn is_outcome_unknown(&self) -> bool {
        use mongodb::error::ErrorKind;
        self.has_label(mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT)
            || self.driver_error().is_some_and(|e| {
                matches!(
                    *e.kind,
                    ErrorKind::Io(_) | ErrorKind::ConnectionPoolCleared { .. }
                )
            })
    }

    /// True when the server refused a write because a concurrent transaction wrote the same
    /// document (`WriteConflict`, code 112).
    pub fn is_write_conflict(&self) -> bool {
        use mongodb::error::{ErrorKind, WriteFailure};
        self.driver_error().is_some_and(|e| match &*e.kind {
            ErrorKind::Command(c) => c.code == WRITE_CONFLICT,
            ErrorKind::Write(WriteFailure::WriteError(w)) => w.code == WRITE_CONFLICT,
            _ => false,
        })
    }

    /// True when the server ended the command at its time limit (`maxTimeMS`,
    /// `MaxTimeMSExpired`): nothing was written, and the same command may run again.
    pub fn is_time_limit(&self) -> bool {
        self.server_code() == Some(MAX_TIME_MS_EXPIRED)
    }

    /// The server's error code of a failed command (not of one statement of a write).
    fn server_code(&self) -> Option<i32> {
        self.driver_error().and_then(|e| match &*e.kind {
            mongodb::error::ErrorKind::Command(c) => Some(c.code),
            _ => None,
        })
    }

    /// True when the deployment could not be reached: no server could be selected within the
    /// client's server selection timeout (`serverSelectionTimeoutMS`, 30 s by default), because
    /// it is down, unreachable from here, or has no member that can serve the operation (no
    /// primary during an election). The command was not sent, so it did not run: the same
    /// operation may be sent again once the deployment is back (a web service answers 503 with
    /// `Retry-After`; see the guide's web-service chapter). A connection lost while a command
    /// was on its way is [`is_outcome_unknown`](Error::is_outcome_unknown) instead, and never
    /// this. How long it takes to be told is the selection timeout: a service that would
    /// rather answer at once sets a short one.
    pub fn is_unreachable(&self) -> bool {
        self.driver_error()
            .is_some_and(|e| matches!(&*e.kind, mongodb::error::ErrorKind::ServerSelection { .. }))
    }
}

/// Pulls the index name and the duplicated key out of the server's E11000 message:
/// `E11000 duplicate key error collection: db.books index: isbn_1 dup key: { isbn: "..." }`.
fn parse_duplicate_key(message: &str) -> (String, String) {
    let index = message
        .split_once("index: ")
        .map(|(_, rest)| rest.split_whitespace().next().unwrap_or("").to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "<unknown index>".to_owned());
    let key = message
        .split_once("dup key: ")
        .map(|(_, rest)| rest.trim().to_owned())
        .unwrap_or_else(|| "<key not reported>".to_owned());
    (index, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command_error(code: i32, name: &str) -> Error {
        let reply = bson::doc! { "code": code, "codeName": name, "errmsg": "from the server" };
        let command: mongodb::error::CommandError = bson::deserialize_from_document(reply).unwrap();
        Error::Driver(mongodb::error::ErrorKind::Command(command).into())
    }

    #[test]
    fn a_transaction_the_server_no_longer_has_is_run_again() {
        assert!(command_error(251, "NoSuchTransaction").is_transient());
        assert!(command_error(112, "WriteConflict").is_transient());
        assert!(!command_error(11000, "DuplicateKey").is_transient());
    }

    #[test]
    fn parses_the_e11000_message() {
        let (index, key) = parse_duplicate_key(
            "E11000 duplicate key error collection: lib.books index: isbn_1 dup key: { isbn: \"978\" }",
        );
        assert_eq!(index, "isbn_1");
        assert_eq!(key, "{ isbn: \"978\" }");
    }

    #[test]
    fn survives_a_message_without_details() {
        let (index, key) = parse_duplicate_key("E11000 duplicate key error");
        assert_eq!(index, "<unknown index>");
        assert_eq!(key, "<key not reported>");
    }
}
