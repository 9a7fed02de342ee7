//! Testing your models against a real database (feature `testing`).
//!
//! [`TestDb::new`] gives each test a fresh, uniquely named database, dropped when the `TestDb`
//! is dropped, on one server per test process:
//!
//! - when `MONGODB_URI` is set, that server (a real MongoDB);
//! - otherwise a local MongoDB-wire server (SecantusDB's `secantusd-rs`, pinned version) that
//!   the harness starts on a free port on first use and stops when the process exits.
//!
//! Tests can run in parallel: each has its own database and its own client, and each client
//! logs the commands it sends ([`TestDb::commands`]), so a test can assert how many round trips
//! an operation took.
//!
//! ```no_run
//! # use odm::prelude::*;
//! # #[derive(Model, Serialize, Deserialize)]
//! # #[odm(collection = "authors")]
//! # struct Author { #[serde(rename = "_id")] id: i32, last_name: String }
//! #[tokio::test]
//! async fn authors_round_trip() -> odm::Result<()> {
//!     let db = odm::testing::TestDb::new().await?;
//!     db.odm().insert_one(&Author { id: 1, last_name: "Fitzgerald".into() }).await?;
//!     assert_eq!(db.commands().count_of("insert"), 1);
//!     Ok(())
//! }
//! ```
//!
//! Set `ODM_KEEP_TEST_DB=1` to keep the databases for inspection, and
//! `ODM_TEST_POPULATE_PLAN=in|lookup|auto` to run every populate of the tests under one plan
//! (see [`populate_plan`]).

mod busy;
mod explain;
pub mod hooks;
mod location;
mod proxy;
mod server;

use std::sync::atomic::{AtomicUsize, Ordering};

use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

pub use busy::BusyCpu;
pub use explain::{explain_sent, Explained, IndexReport, Plan};
pub use location::{install_command, server_binary, SERVER_CRATE, SERVER_VERSION};
pub use proxy::FaultProxy;
pub use server::{find_binary, local_server, TestServer};

use crate::monitor::CommandLog;
use crate::{Odm, Result};

/// The connection string tests use: `MONGODB_URI` when set, else the local server's (started
/// on first call).
pub fn test_uri() -> Result<String> {
    match std::env::var("MONGODB_URI") {
        Ok(uri) if !uri.is_empty() => Ok(uri),
        _ => Ok(local_server()?.uri().to_owned()),
    }
}

/// The variable that sets the populate plan of every [`TestDb`]'s handle: `in`, `lookup` or
/// `auto` (the default), so that a suite runs under each plan.
pub const POPULATE_PLAN_ENV: &str = "ODM_TEST_POPULATE_PLAN";

/// The populate plan [`POPULATE_PLAN_ENV`] names ([`Plan::Auto`](crate::populate::Plan::Auto)
/// when unset).
pub fn populate_plan() -> Result<crate::populate::Plan> {
    match std::env::var(POPULATE_PLAN_ENV) {
        Ok(name) if !name.is_empty() => crate::populate::Plan::parse(&name).ok_or_else(|| {
            crate::Error::Unsupported(format!(
                "{POPULATE_PLAN_ENV}={name}: expected `in`, `lookup` or `auto`"
            ))
        }),
        _ => Ok(crate::populate::Plan::Auto),
    }
}

/// A fresh database for one test, dropped when this value is dropped.
#[derive(Debug)]
pub struct TestDb {
    odm: Odm,
    raw: Database,
    uri: String,
    log: CommandLog,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl TestDb {
    /// A new database named `odm_test_<pid>_<n>_<nanos>` on the test server, with a client of
    /// its own that logs every command it sends, and a second, unlogged client for
    /// [`TestDb::raw`]. Sends no command.
    pub async fn new() -> Result<TestDb> {
        let uri = test_uri()?;
        let mut options = ClientOptions::parse(&uri).await?;
        let log = CommandLog::with_documents();
        log.attach(&mut options);
        crate::trace::count_commands(&mut options);
        let mongos = crate::engine::watch_mongos(&mut options);
        let client = Client::with_options(options)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let name = format!(
            "odm_test_{}_{}_{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let unlogged = Client::with_options(ClientOptions::parse(&uri).await?)?;
        Ok(TestDb {
            odm: Odm::watched(client.database(&name), mongos).with_populate_plan(populate_plan()?),
            raw: unlogged.database(&name),
            uri,
            log,
        })
    }

    /// The same database, its handle working with the models of `catalog` only (see
    /// [`Odm::with_catalog`]).
    pub fn with_catalog(mut self, catalog: crate::catalog::Catalog) -> Self {
        self.odm = self.odm.clone().with_catalog(catalog);
        self
    }

    /// The `Odm` handle on this test's database.
    pub fn odm(&self) -> &Odm {
        &self.odm
    }

    /// The same database through a second client that is not logged: read back what an
    /// operation stored, or set up data, without adding to [`TestDb::commands`].
    pub fn raw(&self) -> &Database {
        &self.raw
    }

    /// The database name.
    pub fn name(&self) -> &str {
        self.odm.database().name()
    }

    /// The commands this test's client has sent.
    pub fn commands(&self) -> &CommandLog {
        &self.log
    }

    /// Explains the queries this test's client sent since the log was last taken or cleared,
    /// and empties the log: see [`explain_sent`]. Sends one `explain` per query, through the
    /// unlogged client. Assert with [`IndexReport::is_clean`] (printing the report on failure
    /// lists each query and its plan).
    pub async fn explain_sent(&self) -> Result<IndexReport> {
        explain_sent(&self.raw, &self.log.take()).await
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if std::env::var_os("ODM_KEEP_TEST_DB").is_some_and(|v| v != "0") {
            return;
        }
        // Drop can't await, and the test's runtime may be shutting down: drop the database
        // from a thread with a runtime and a client of its own.
        let uri = self.uri.clone();
        let name = self.name().to_owned();
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let client = Client::with_uri_str(&uri).await.ok()?;
                client.database(&name).drop().await.ok()
            })
        });
        let _ = dropped.join();
    }
}
