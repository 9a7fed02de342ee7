//! What a bulk write did, and what of it failed.

use std::fmt;

use super::Error;

/// What the writes of a bulk write ([`Odm::bulk`](crate::Odm::bulk)) did, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkWritten {
    /// Documents inserted.
    pub inserted: u64,
    /// Documents the updates and replacements matched.
    pub matched: u64,
    /// Documents the updates and replacements changed.
    pub modified: u64,
    /// Documents the upserts inserted (not counted in `inserted`).
    pub upserted: u64,
    /// Documents deleted (marked, for a model with soft deletes).
    pub deleted: u64,
}

/// One write of a bulk write that failed: its place in the batch, and why.
#[derive(Debug)]
pub struct BulkFailure {
    /// Its place among the writes given, from 0.
    pub index: usize,
    /// The server's error code, when the server refused it.
    pub code: Option<i32>,
    /// What went wrong.
    pub message: String,
    /// The typed error, for a write sent on its own (a write the ODM maintains, or a whole
    /// command that failed); `None` for a statement the server refused inside a command.
    pub error: Option<Box<Error>>,
}

impl BulkFailure {
    /// True when the write broke a unique index (the server's code 11000).
    pub fn is_duplicate_key(&self) -> bool {
        self.code == Some(11000) || self.error.as_ref().is_some_and(|e| e.is_duplicate_key())
    }

    pub(crate) fn of(index: usize, error: Error) -> Self {
        let code = error.driver_error().and_then(server_code);
        BulkFailure {
            index,
            code,
            message: error.to_string(),
            error: Some(Box::new(error)),
        }
    }
}

/// The code of the server's refusal inside a driver error, when there is one.
fn server_code(e: &mongodb::error::Error) -> Option<i32> {
    use mongodb::error::{ErrorKind, WriteFailure};
    match &*e.kind {
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.code),
        ErrorKind::Command(c) => Some(c.code),
        ErrorKind::InsertMany(m) => m.write_errors.as_ref()?.first().map(|w| w.code),
        _ => None,
    }
}

impl fmt::Display for BulkFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "write {}: {}", self.index, self.message)
    }
}

/// The failures of a bulk write, as its error shows them: the first, and how many more.
pub(super) fn show_failures(failures: &[BulkFailure]) -> String {
    match failures {
        [] => "no write failed".to_owned(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}
