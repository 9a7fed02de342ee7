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

impl Error {
    /// The error on one line, as a person reads it: what the server said of a driver error
    /// (never its raw reply, nor the driver's description of the topology), an unreachable
    /// deployment as the servers tried and why each failed.
    pub(crate) fn one_line(&self) -> String {
        match self {
            Error::Driver(e) if self.is_unreachable() => unreachable(e),
            Error::Driver(e) => server_said(e),
            other => other.to_string(),
        }
    }
}

/// `no server could be reached (127.0.0.1:9: Connection refused (os error 111))`, from the
/// driver's `Server selection timeout: ... Topology: { ... Address: .., Error: .. }`.
fn unreachable(e: &mongodb::error::Error) -> String {
    let said = match &*e.kind {
        mongodb::error::ErrorKind::ServerSelection { message, .. } => message.as_str(),
        _ => "",
    };
    let servers: Vec<String> = said
        .split("Address: ")
        .skip(1)
        .map(|server| {
            let address = server.split([',', ' ']).next().unwrap_or_default();
            let why = server
                .split_once("Error: ")
                .map(|(_, rest)| rest.strip_prefix("Kind: ").unwrap_or(rest))
                .and_then(|rest| rest.split(", labels").next())
                .map(|why| why.strip_prefix("I/O error: ").unwrap_or(why));
            match why {
                Some(why) => format!("{address}: {why}"),
                None => address.to_owned(),
            }
        })
        .collect();
    if servers.is_empty() {
        let first = said.split(". Topology").next().unwrap_or(said);
        format!("no server could be reached ({first})")
    } else {
        format!("no server could be reached ({})", servers.join("; "))
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
/// document. Sixteen bytes, so that the calls and futures that carry it stay small: an
/// `ObjectId` or integer id is held in place, anything else in a box.
#[derive(Debug, Clone)]
pub(crate) enum Shown {
    /// `{_id: ObjectId(..)}`.
    ObjectId(bson::oid::ObjectId),
    /// `{_id: 32-bit integer}`.
    Int32(i32),
    /// `{_id: 64-bit integer}`.
    Int64(i64),
    /// `{_id: value}`, any other value.
    Id(Box<Bson>),
    /// Any other filter.
    Filter(Box<bson::Document>),
}

impl Shown {
    /// What to keep of `filter`.
    pub(crate) fn of(filter: &bson::Document) -> Shown {
        match filter.iter().next() {
            Some((key, id)) if filter.len() == 1 && key == "_id" => Shown::id(id),
            _ => Shown::Filter(Box::new(filter.clone())),
        }
    }

    /// The filter `{_id: id}`.
    pub(crate) fn id(id: &Bson) -> Shown {
        match id {
            Bson::ObjectId(oid) => Shown::ObjectId(*oid),
            Bson::Int32(n) => Shown::Int32(*n),
            Bson::Int64(n) => Shown::Int64(*n),
            other => Shown::Id(Box::new(other.clone())),
        }
    }

    /// The filter as [`show_filter`] prints it.
    pub(crate) fn show(&self) -> String {
        match self.id_value() {
            Some(id) => show_filter(&bson::doc! { "_id": id }),
            None => self.filter_shown(),
        }
    }

    /// The id as [`show_id`] prints it (the filter as [`show_filter`] does when it is not by
    /// `_id` alone): how a failed insert or replacement names its document.
    pub(crate) fn show_as_id(&self) -> String {
        match self.id_value() {
            Some(id) => show_id(Some(&id)),
            None => self.filter_shown(),
        }
    }

    fn id_value(&self) -> Option<Bson> {
        Some(match self {
            Shown::ObjectId(oid) => Bson::ObjectId(*oid),
            Shown::Int32(n) => Bson::Int32(*n),
            Shown::Int64(n) => Bson::Int64(*n),
            Shown::Id(id) => (**id).clone(),
            Shown::Filter(_) => return None,
        })
    }

    fn filter_shown(&self) -> String {
        match self {
            Shown::Filter(filter) => show_filter(filter),
            _ => String::new(),
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
