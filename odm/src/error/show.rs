//! Errors as a person reads them: what the server said, filters and ids shortened.

use bson::Bson;

use super::Error;

/// Errors one after the other, `; `-separated.
/// What the server (or the driver) said of a failed write, as a person reads it: the error's
/// name, code and message, and its labels; never the raw reply, which the driver's own message
/// dumps in hexadecimal (it stays in [`Error::driver_error`]).
pub(super) fn server_said(e: &mongodb::error::Error) -> String {
    use mongodb::error::{ErrorKind, WriteFailure};
    let named = |name: &str, code: i32, message: &str| match name {
        "" => format!("{message} (code {code})"),
        name => format!("{name} (code {code}): {message}"),
    };
    let said = match &*e.kind {
        ErrorKind::Command(c) => named(&c.code_name, c.code, &c.message),
        ErrorKind::Write(WriteFailure::WriteError(w)) => {
            named(w.code_name.as_deref().unwrap_or(""), w.code, &w.message)
        }
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => {
            format!("write concern: {}", named(&w.code_name, w.code, &w.message))
        }
        ErrorKind::InsertMany(m) => {
            let mut parts: Vec<String> = m
                .write_errors
                .iter()
                .flatten()
                .map(|w| {
                    let name = w.code_name.as_deref().unwrap_or("");
                    format!("document {}: {}", w.index, named(name, w.code, &w.message))
                })
                .collect();
            if let Some(w) = &m.write_concern_error {
                parts.push(format!(
                    "write concern: {}",
                    named(&w.code_name, w.code, &w.message)
                ));
            }
            parts.join("; ")
        }
        other => other.to_string(),
    };
    let labels: Vec<&str> = e.labels().iter().map(String::as_str).collect();
    match labels.is_empty() {
        true => said,
        false => format!("{said} [{}]", labels.join(", ")),
    }
}

pub(super) fn join(errors: &[Error]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A filter printed for an error message, long `$in` lists cut to their first ids.
pub(crate) fn show_filter(filter: &bson::Document) -> String {
    fn cut(value: &Bson) -> Bson {
        match value {
            Bson::Array(items) if items.len() > 3 => {
                let mut out: Vec<Bson> = items.iter().take(3).map(cut).collect();
                out.push(Bson::String(format!("... {} more", items.len() - 3)));
                Bson::Array(out)
            }
            Bson::Array(items) => Bson::Array(items.iter().map(cut).collect()),
            Bson::Document(d) => {
                Bson::Document(d.iter().map(|(k, v)| (k.clone(), cut(v))).collect())
            }
            other => other.clone(),
        }
    }
    let shown: bson::Document = filter.iter().map(|(k, v)| (k.clone(), cut(v))).collect();
    shown.to_string()
}

/// The filter of a write, kept to be shown if the write fails (the driver takes the filter
/// itself): for the usual filter by `_id` alone, only the id, which costs no copy of a
/// document.
#[derive(Debug, Clone)]
pub(crate) enum Shown {
    /// `{_id: value}`.
    Id(Bson),
    /// Any other filter.
    Filter(bson::Document),
}

impl Shown {
    /// What to keep of `filter`.
    pub(crate) fn of(filter: &bson::Document) -> Shown {
        match filter.iter().next() {
            Some((key, id)) if filter.len() == 1 && key == "_id" => Shown::Id(id.clone()),
            _ => Shown::Filter(filter.clone()),
        }
    }

    /// The filter as [`show_filter`] prints it.
    pub(crate) fn show(&self) -> String {
        match self {
            Shown::Id(id) => show_filter(&bson::doc! { "_id": id.clone() }),
            Shown::Filter(filter) => show_filter(filter),
        }
    }
}

/// An `_id` printed the way the shell prints it, for error messages.
pub(crate) fn show_id(id: Option<&Bson>) -> String {
    match id {
        Some(Bson::String(s)) => format!("{{ _id: {s:?} }}"),
        Some(v) => format!("{{ _id: {v} }}"),
        None => "<no _id>".to_owned(),
    }
}
