//! The read/write-ratio audit of rule of thumb 5: per denormalized copy, how many documents
//! carrying it were read, against how many cascade writes kept it up to date.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use super::CopyInfo;

type Key = (&'static str, String);

static COUNTERS: Mutex<BTreeMap<Key, (u64, u64)>> = Mutex::new(BTreeMap::new());

fn with_counters<R>(f: impl FnOnce(&mut BTreeMap<Key, (u64, u64)>) -> R) -> R {
    f(&mut COUNTERS.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Counts `docs` documents of `collection` read through the ODM, for each copy they carry.
pub(crate) fn record_reads(catalog: &crate::catalog::Catalog, collection: &str, docs: usize) {
    if docs == 0 {
        return;
    }
    let copies = catalog.copies_into(collection);
    if copies.is_empty() {
        return;
    }
    with_counters(|c| {
        for copy in copies {
            c.entry((copy.dependent, copy.path.clone())).or_default().0 += docs as u64;
        }
    });
}

/// Counts one cascade write (one `update` command) to `copy`.
pub(crate) fn record_write(copy: &CopyInfo) {
    with_counters(|c| c.entry((copy.dependent, copy.path.clone())).or_default().1 += 1);
}

/// One copy's counts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditRow {
    /// The collection holding the copy.
    pub collection: &'static str,
    /// The copy's path.
    pub path: String,
    /// Documents carrying the copy read through the ODM.
    pub reads: u64,
    /// Cascade writes (update commands) that kept it up to date.
    pub writes: u64,
}

impl AuditRow {
    /// Rule of thumb 5: the copy costs more than it saves once writes outnumber reads.
    pub fn writes_dominate(&self) -> bool {
        self.writes > self.reads
    }
}

/// The audit of every copy, since the process started (or [`reset_audit`]); printable.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct AuditReport {
    /// One row per copy that was read or written.
    pub rows: Vec<AuditRow>,
}

impl AuditReport {
    /// The copies whose writes outnumber their reads.
    pub fn write_heavy(&self) -> Vec<&AuditRow> {
        self.rows.iter().filter(|r| r.writes_dominate()).collect()
    }
}

/// The counts so far. Counting is in memory, per process, and costs one map update per query
/// of a model that carries copies.
pub fn audit() -> AuditReport {
    let rows = with_counters(|c| {
        c.iter()
            .map(|((collection, path), (reads, writes))| AuditRow {
                collection,
                path: path.clone(),
                reads: *reads,
                writes: *writes,
            })
            .collect()
    });
    AuditReport { rows }
}

/// Starts counting again.
pub fn reset_audit() {
    with_counters(BTreeMap::clear);
}

impl fmt::Display for AuditReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "denormalized copies: documents read vs cascade writes")?;
        if self.rows.is_empty() {
            writeln!(f, "  (nothing read or written yet)")?;
        }
        for r in &self.rows {
            let flag = if r.writes_dominate() {
                "  <- writes dominate: reconsider this copy (rule of thumb 5)"
            } else {
                ""
            };
            writeln!(
                f,
                "  {}.{}: {} read, {} written{flag}",
                r.collection, r.path, r.reads, r.writes
            )?;
        }
        Ok(())
    }
}
