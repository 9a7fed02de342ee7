//! What a command prints, as text and as JSON, and the exit code it ends with.

use std::fmt::Write as _;
use std::io::Write as _;

use bson::Bson;
use serde_json::Value;

/// The outcome of a command that ran: its text, its JSON document, and whether it found
/// something to act on.
#[derive(Debug)]
pub(super) struct Report {
    pub(super) text: String,
    pub(super) json: Value,
    pub(super) problems: bool,
}

impl Report {
    pub(super) fn new(text: String, json: Value, problems: bool) -> Self {
        Report {
            text,
            json,
            problems,
        }
    }

    /// Prints the text, or the JSON document on one line.
    pub(super) fn print(&self, json: bool) {
        if json {
            stdout(&format!("{}\n", self.json));
        } else if self.text.ends_with('\n') {
            stdout(&self.text);
        } else {
            stdout(&format!("{}\n", self.text));
        }
    }

    pub(super) fn code(&self) -> u8 {
        if self.problems {
            super::PROBLEMS
        } else {
            super::SUCCESS
        }
    }
}

/// Writes `text` on stdout. Every command prints through here: a stdout closed early (`console
/// diagram | head -1`, a reader that went away) ends the output quietly, and the command still
/// ends with its own exit code, never a panic.
pub(super) fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Writes `text` on stderr, as [`stdout`] does on stdout.
pub(super) fn stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// A BSON value as JSON (relaxed extended JSON: an `ObjectId` is `{"$oid": "..."}`).
pub(super) fn json_of(value: &Bson) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A table: a header row and rows, columns padded to their widest cell.
pub(super) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}
