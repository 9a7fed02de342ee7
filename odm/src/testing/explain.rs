//! Index use you can assert: the queries an operation sent, explained by the server, and those
//! whose winning plan scans a whole collection.

use std::fmt;

use bson::{doc, Bson, Document};
use mongodb::Database;

use crate::monitor::SentCommand;
use crate::Result;

/// What the server's query planner chose for one query the ODM sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Plan {
    /// The winning plan reads through these indexes (by name), never the whole collection.
    Indexed(Vec<String>),
    /// The winning plan scans the collection (a `COLLSCAN` stage, possibly beside index scans,
    /// as in an `$or` with an unindexed branch).
    CollectionScan,
    /// The collection does not exist: nothing is read (an `EOF` plan).
    NoCollection,
    /// The server answered `explain` without a winning plan (a server that does not report
    /// plans): nothing can be asserted about this query.
    Unreported,
}

/// One query the ODM sent, and its plan.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Explained {
    /// The command's name: `find`, `aggregate`, `update`, `delete`, `findAndModify`, `count`
    /// or `distinct`.
    pub command: String,
    /// The collection it reads.
    pub collection: String,
    /// The query as the planner saw it: the filter (`q` of an update or delete statement, the
    /// first stage of a pipeline).
    pub query: Document,
    /// What the planner chose.
    pub plan: Plan,
}

/// The queries of a list of sent commands, explained: see [`explain_sent`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct IndexReport {
    /// Every query explained, in the order sent.
    pub explained: Vec<Explained>,
    /// The commands that read nothing by a query (`insert`, `getMore`, `commitTransaction`,
    /// `hello`, ...), by name, and those logged without their document.
    pub skipped: Vec<String>,
}

impl IndexReport {
    /// The queries whose winning plan scans a collection.
    pub fn scans(&self) -> impl Iterator<Item = &Explained> {
        self.explained
            .iter()
            .filter(|e| e.plan == Plan::CollectionScan)
    }

    /// The queries the server gave no plan for.
    pub fn unreported(&self) -> impl Iterator<Item = &Explained> {
        self.explained.iter().filter(|e| e.plan == Plan::Unreported)
    }

    /// Whether every query explained used an index (or read a missing collection), and the
    /// server reported a plan for each. A report of no query at all is not clean: what was to
    /// be checked did not reach the server.
    pub fn is_clean(&self) -> bool {
        !self.explained.is_empty()
            && self
                .explained
                .iter()
                .all(|e| matches!(e.plan, Plan::Indexed(_) | Plan::NoCollection))
    }
}

impl fmt::Display for IndexReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} queries explained", self.explained.len())?;
        for e in &self.explained {
            let plan = match &e.plan {
                Plan::Indexed(names) => format!("index {}", names.join(", ")),
                Plan::CollectionScan => "COLLECTION SCAN".to_owned(),
                Plan::NoCollection => "no collection".to_owned(),
                Plan::Unreported => "no plan reported".to_owned(),
            };
            writeln!(f, "  {} {} {}: {plan}", e.command, e.collection, e.query)?;
        }
        Ok(())
    }
}

/// Fields of a logged command that belong to the session or the transaction it ran in, not to
/// the query: `explain` refuses or ignores them.
const SESSION_FIELDS: &[&str] = &[
    "lsid",
    "txnNumber",
    "startTransaction",
    "autocommit",
    "$clusterTime",
    "$db",
    "readConcern",
    "writeConcern",
    "$readPreference",
    "apiVersion",
    "apiStrict",
    "apiDeprecationErrors",
];

/// Explains, on `db`, every query among `commands` (as a [`CommandLog`] that keeps documents
/// logged them: [`TestDb::explain_sent`](super::TestDb::explain_sent) passes its own): one
/// `explain` with verbosity `queryPlanner` per `find`, `aggregate`, `count`, `distinct` and
/// `findAndModify`, and per statement of an `update` or a `delete`. Nothing is executed (a
/// write's `explain` only plans it). Commands on other databases are skipped.
///
/// [`CommandLog`]: crate::monitor::CommandLog
pub async fn explain_sent(db: &Database, commands: &[SentCommand]) -> Result<IndexReport> {
    let mut report = IndexReport::default();
    for sent in commands {
        let Some(command) = sent.command.as_ref().filter(|_| sent.db == db.name()) else {
            report.skipped.push(sent.name.clone());
            continue;
        };
        let queries = queries_of(&sent.name, command);
        if queries.is_empty() {
            report.skipped.push(sent.name.clone());
        }
        for (collection, query, explainable) in queries {
            let reply = db
                .run_command(doc! { "explain": explainable, "verbosity": "queryPlanner" })
                .await?;
            report.explained.push(Explained {
                command: sent.name.clone(),
                collection,
                query,
                plan: plan_of(&reply),
            });
        }
    }
    Ok(report)
}

/// The queries of one command: its collection, what the planner is asked, and the command
/// to explain.
fn queries_of(name: &str, command: &Document) -> Vec<(String, Document, Document)> {
    let Ok(collection) = command.get_str(name) else {
        return Vec::new();
    };
    let mut clean = command.clone();
    for field in SESSION_FIELDS {
        clean.remove(field);
    }
    let whole = |query: Document| vec![(collection.to_owned(), query, clean.clone())];
    match name {
        "find" | "count" | "distinct" => whole(
            command
                .get_document("filter")
                .or_else(|_| command.get_document("query"))
                .cloned()
                .unwrap_or_default(),
        ),
        "findAndModify" => whole(command.get_document("query").cloned().unwrap_or_default()),
        "aggregate" => {
            let first = command
                .get_array("pipeline")
                .ok()
                .and_then(|p| p.first())
                .and_then(Bson::as_document)
                .cloned()
                .unwrap_or_default();
            whole(first)
        }
        "update" | "delete" => {
            let list = if name == "update" {
                "updates"
            } else {
                "deletes"
            };
            let Ok(statements) = command.get_array(list) else {
                return Vec::new();
            };
            statements
                .iter()
                .filter_map(Bson::as_document)
                .map(|statement| {
                    let mut one = clean.clone();
                    one.insert(list, vec![Bson::Document(statement.clone())]);
                    let query = statement.get_document("q").cloned().unwrap_or_default();
                    (collection.to_owned(), query, one)
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The plan an `explain` reply reports: the stages of every winning plan in it (one for a
/// query, one per shard, one per `$cursor` stage of a pipeline), never the rejected ones.
fn plan_of(reply: &Document) -> Plan {
    let winning = crate::index::winning(reply);
    if !winning.reported {
        Plan::Unreported
    } else if winning.scan {
        Plan::CollectionScan
    } else if winning.indexes.is_empty() && winning.eof {
        Plan::NoCollection
    } else {
        Plan::Indexed(winning.indexes)
    }
}
