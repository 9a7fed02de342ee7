//! What every operation and every feature runs on: the handle's state ([`Odm`]: the
//! database, the catalog of models, the settings), sending a driver action in the caller's
//! session or in none, and reading documents back. It sits above the catalog, which the handle
//! holds, and below the features and operations, which all use it.

mod collections;
mod concern;
pub(crate) use concern::{concerned, write_options, Extras};
mod follows;
pub(crate) use collections::Slot;
mod in_session;
mod loads;
mod maintainer;
mod own;
mod read;
mod routed;
mod sending;
mod state;
pub(crate) mod write;

pub use follows::BadDocument;
pub(crate) use follows::{done, Absent, Applied, Event, Follows, Ids, Interest, Noticed, Op};
pub use in_session::InSession;
pub(crate) use loads::Loads;
pub use loads::{IntoPopulate, Loading};
pub(crate) use maintainer::{
    DeleteCall, Described, InsertCall, Maintainer, ModifyCall, NextDelete, NextInsert, NextModify,
    NextReplace, NextUpdate, ReplaceCall, Step, Stepped, UpdateCall,
};
pub(crate) use own::{BatchWritten, Command, Effect, Own, Returning, Statements, Written};
pub(crate) use read::{
    decoded, find_decoded, find_documents, missing_in, model_filter, read_options, soft_deleted,
};
pub(crate) use routed::{by_id_routed, routed};
pub(crate) use sending::{write_future, Deleted, DriverFuture, Known, Same, Sending};
#[cfg(feature = "testing")]
pub(crate) use state::watch_mongos;
pub use state::Odm;
pub(crate) use state::Writing;

/// A boxed future that can be sent to another thread (the futures crate's).
pub(crate) use futures_util::future::BoxFuture;

/// How [`Find::populate`](crate::ops::Find::populate) loads the references: chosen per query
/// with [`Find::populate_plan`](crate::ops::Find::populate_plan), or for a whole handle with
/// [`Odm::with_populate_plan`](crate::Odm::with_populate_plan).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Plan {
    /// The cost rule of [`choose`](crate::populate::choose) picks one of the two below, before anything is sent; a
    /// lookup the server refuses is retried once with the `$in` plan.
    #[default]
    Auto,
    /// One `find` for the documents, then one `find` (`{_id: {$in: ids}}`) per relation and
    /// level, each id sent once however many documents reference it (split under the command
    /// limits); the relations of one level are fetched concurrently.
    In,
    /// One `aggregate` for the documents and every level (`$lookup` sub-pipelines, nested): one
    /// round trip (plus `getMore`s for a large result) whatever the depth. A referenced
    /// document comes back once per document that references it. When the server refuses the
    /// pipeline, the query fails with [`Error::LookupRefused`](crate::Error::LookupRefused).
    Lookup,
}

impl Plan {
    /// The plan named `in`, `lookup` or `auto` (any case), as test harnesses and configuration
    /// files spell it.
    pub fn parse(name: &str) -> Option<Plan> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Plan::Auto),
            "in" => Some(Plan::In),
            "lookup" => Some(Plan::Lookup),
            _ => None,
        }
    }
}

/// Awaits the driver's `action`, in `session` when there is one (an `Option<&mut
/// ClientSession>`): the driver takes a session by a method of each action's own.
macro_rules! send {
    ($action:expr, $session:expr) => {
        match $session {
            None => $action.await,
            Some(s) => $action.session(s).await,
        }
    };
}
pub(crate) use send;

/// The driver's future of `action`, in `session` when there is one: [`send!`] without the
/// `.await`, for a write that hands the driver's own future on instead of awaiting it inside
/// a larger one.
macro_rules! start {
    ($action:expr, $session:expr) => {
        match $session {
            None => ::std::future::IntoFuture::into_future($action),
            Some(s) => ::std::future::IntoFuture::into_future($action.session(s)),
        }
    };
}
pub(crate) use start;
