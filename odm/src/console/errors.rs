//! How a command that could not run says so: one line for people on stderr (`error: no server
//! could be reached (127.0.0.1:27017: Connection refused (os error 111))`), and under `--json`
//! one JSON document on stdout naming the kind of failure, for scripts:
//! `{"error": "...", "kind": "unreachable"}`.

use serde_json::json;

use super::report::{stderr, stdout};
use crate::Error;

/// Why a command could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A wrong argument, an unknown model or subcommand.
    Usage,
    /// The deployment could not be reached within the server selection timeout.
    Unreachable,
    /// A connection string that does not parse, or names no usable server.
    Connection,
    /// The server refused a command (its code and name are in the message).
    Refused,
    /// A migration failed, or cannot run or be reverted.
    Migration,
    /// A stored document that cannot be read as its model.
    Data,
    /// Anything else odm reported.
    Other,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Usage => "usage",
            Kind::Unreachable => "unreachable",
            Kind::Connection => "connection",
            Kind::Refused => "refused",
            Kind::Migration => "migration",
            Kind::Data => "data",
            Kind::Other => "other",
        }
    }
}

/// A command that could not run: its kind and one line saying why.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) kind: Kind,
    pub(super) message: String,
}

impl Failure {
    /// The failure `e` is, said on one line.
    pub(super) fn of(e: &Error) -> Self {
        use mongodb::error::ErrorKind;
        let kind = match e {
            _ if e.is_unreachable() => Kind::Unreachable,
            Error::Migration { .. } => Kind::Migration,
            Error::Unsupported(_) => Kind::Usage,
            Error::Decode { .. } | Error::UnknownKind { .. } | Error::UnknownReference { .. } => {
                Kind::Data
            }
            Error::Driver(d) => match &*d.kind {
                ErrorKind::InvalidArgument { .. }
                | ErrorKind::DnsResolve { .. }
                | ErrorKind::Authentication { .. } => Kind::Connection,
                ErrorKind::Command(_) | ErrorKind::Write(_) => Kind::Refused,
                _ => Kind::Other,
            },
            // A write whose connection was cut, or whose server stopped answering, was not
            // refused: what happened to it is unknown.
            Error::Write { source, .. } => match &*source.kind {
                ErrorKind::Command(_) | ErrorKind::Write(_) => Kind::Refused,
                _ => Kind::Other,
            },
            Error::DocumentInvalid { .. } | Error::DuplicateKey { .. } => Kind::Refused,
            _ => Kind::Other,
        };
        Failure {
            kind,
            message: e.one_line(),
        }
    }

    /// Says it on stderr, and under `--json` as `{"error", "kind"}` on stdout.
    pub(super) fn print(&self, json: bool) {
        stderr(&format!("error: {}\n", self.message));
        if json {
            let document = json!({ "error": self.message, "kind": self.kind.name() });
            stdout(&format!("{document}\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_failing_with(kind: mongodb::error::ErrorKind) -> Error {
        Error::from_write("odm_migrations", || "{_id: 1}".to_owned(), kind.into())
    }

    #[test]
    fn a_write_is_refused_only_when_the_server_refused_it() {
        let reply = bson::doc! { "code": 2, "codeName": "BadValue", "errmsg": "refused" };
        let refused: mongodb::error::CommandError = bson::deserialize_from_document(reply).unwrap();
        let refused = write_failing_with(mongodb::error::ErrorKind::Command(refused));
        assert_eq!(Failure::of(&refused).kind, Kind::Refused);
        let cut = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut");
        let cut = write_failing_with(mongodb::error::ErrorKind::Io(std::sync::Arc::new(cut)));
        assert!(matches!(cut, Error::Write { .. }));
        assert_eq!(Failure::of(&cut).kind, Kind::Other);
    }
}
