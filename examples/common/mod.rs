//! What every example shares: the connection to the development server, and the printing of
//! numbered steps with the commands each step sent.
//!
//! Included by each example with `#[path = "common/mod.rs"] mod common;`; not an example of its
//! own.

// Each example uses a part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::{Display, Write as _};
use std::sync::{Mutex, OnceLock};

use odm::bson::oid::ObjectId;
use odm::bson::{Bson, Document};
use odm::mongodb::options::ClientOptions;
use odm::mongodb::Client;
use odm::monitor::CommandLog;
use odm::Odm;

/// Arrays longer than this are shown with their first elements and a count.
const LONGEST_ARRAY: usize = 6;

/// Documents with more fields than this (a day of pre-allocated counters) are shown with their
/// first fields and a count.
const LONGEST_DOCUMENT: usize = 12;

/// Connects to `MONGODB_URI`, or to the local development server (started on first use), with
/// a [`CommandLog`] attached, on a database named after the example and the process. Prints a
/// header.
pub async fn connect(example: &str) -> odm::Result<(Odm, Steps)> {
    let uri = odm::testing::test_uri()?;
    let mut options = ClientOptions::parse(&uri).await?;
    let log = CommandLog::with_documents();
    log.attach(&mut options);
    let client = Client::with_options(options)?;
    let _ = CLIENT.set(client.clone());
    let db_name = format!("odm_{example}_{}", std::process::id());
    let odm = Odm::new(client.database(&db_name));
    println!("odm {example} example: database `{db_name}` on {uri}");
    println!("Each step prints what it did and the commands it sent to the server.");
    Ok((odm, Steps::new(log)))
}

/// The example's client, shut down by [`shutdown`].
static CLIENT: OnceLock<Client> = OnceLock::new();

/// Makes `client` the one [`shutdown`] shuts down, for an example that connects by itself.
pub fn shut_down_at_exit(client: &Client) {
    let _ = CLIENT.set(client.clone());
}

/// Shuts the example's client down before `main` returns: the driver's clean-up of dropped
/// sessions finishes while the runtime still runs, instead of racing its shutdown (which the
/// driver reports as a panic of its connection pool's task). Bounded: a handle still alive
/// somewhere would make the driver wait for ever.
pub async fn shutdown() {
    if let Some(client) = CLIENT.get() {
        let done = client.clone().shutdown();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), done).await;
    }
}

/// The database of one part of an example, next to the example's own (`odm_library_<pid>` →
/// `odm_library_<pid>_subjects`), on the same client and command log: a part whose models
/// reuse a collection name of another part starts from an empty database.
pub fn part(odm: &Odm, name: &str) -> Odm {
    let db_name = format!("{}_{name}", odm.database().name());
    println!("\nThe {name} of the workshop: database `{db_name}`.");
    Odm::new(odm.client().database(&db_name))
}

/// Drops the example's database and says so.
pub async fn drop_database(odm: &Odm) -> odm::Result<()> {
    odm.database().drop().await?;
    println!("\nDropped database `{}`.", odm.database().name());
    Ok(())
}

/// Prints the numbered steps and the commands each sent.
#[derive(Debug)]
pub struct Steps {
    log: CommandLog,
    next: Mutex<u32>,
    names: Mutex<HashMap<ObjectId, String>>,
}

impl Steps {
    pub fn new(log: CommandLog) -> Self {
        Steps {
            log,
            next: Mutex::new(1),
            names: Mutex::default(),
        }
    }

    /// Starts the next step: forgets the commands sent so far and prints the title.
    /// Another handle of the command log the steps print (to count commands).
    #[allow(dead_code)]
    pub fn log(&self) -> CommandLog {
        self.log.clone()
    }

    pub fn start(&self, what: &str) {
        self.log.clear();
        let mut next = self.next.lock().expect("not poisoned");
        println!("\n{:>2}. {what}", *next);
        *next += 1;
    }

    /// Shows `id` as `ObjectId(name)` in the commands printed from now on.
    pub fn name(&self, id: ObjectId, name: &str) {
        self.names
            .lock()
            .expect("not poisoned")
            .insert(id, name.to_owned());
    }

    /// Prints the commands sent since the step started, one per line, without the session,
    /// transaction and cluster fields the driver adds to each. Commands sent inside a
    /// transaction are marked `[transaction]`.
    pub fn sent(&self) {
        let sent = self.log.take();
        let plural = if sent.len() == 1 { "" } else { "s" };
        say(format!("{} command{plural} sent:", sent.len()));
        for command in sent {
            let (shown, in_transaction) = match &command.command {
                Some(doc) => (self.summary(doc), doc.contains_key("autocommit")),
                None => (String::new(), false),
            };
            let mark = if in_transaction {
                "  [transaction]"
            } else {
                ""
            };
            println!("      {}{shown}{mark}", command.name);
        }
    }

    /// `find books: filter {...}, sort {...}`; inserted documents are counted, not shown.
    fn summary(&self, command: &Document) -> String {
        let mut parts = Vec::new();
        let mut target = String::new();
        // Inside a transaction the driver adds the transaction's concerns to its commands;
        // elsewhere a concern is there because the program set it, and it is shown.
        let in_transaction = command.contains_key("autocommit");
        for (i, (key, value)) in command.iter().enumerate() {
            match (i, key.as_str(), value) {
                (0, _, Bson::String(collection)) => target = format!(" {collection}"),
                (0, ..) => {}
                (_, "documents", Bson::Array(docs)) => {
                    let plural = if docs.len() == 1 { "" } else { "s" };
                    parts.push(format!("{} document{plural}", docs.len()));
                }
                (_, "indexes", Bson::Array(indexes)) => {
                    let names: Vec<&str> = indexes
                        .iter()
                        .filter_map(|i| i.as_document()?.get_str("name").ok())
                        .collect();
                    parts.push(format!("indexes [{}]", names.join(", ")));
                }
                (_, "cursor", Bson::Document(d)) if d.is_empty() => {}
                (_, "lsid" | "txnNumber" | "ordered" | "autocommit" | "startTransaction", _) => {}
                (_, "readConcern" | "writeConcern", _) if in_transaction => {}
                // The driver says `primaryPreferred` to a server it is told to talk to
                // directly; any other mode is there because the program chose it.
                (_, "$readPreference", Bson::Document(p))
                    if !matches!(p.get_str("mode"), Ok("primary" | "primaryPreferred")) =>
                {
                    parts.push(format!("$readPreference {}", self.show(value)));
                }
                (_, key, _) if key.starts_with('$') => {}
                (_, key, value) => parts.push(format!("{key} {}", self.show(value))),
            }
        }
        if parts.is_empty() {
            target
        } else {
            format!("{target}: {}", parts.join(", "))
        }
    }

    /// `text` with every named `ObjectId("...")` in it shown as `ObjectId(name)`: for error
    /// messages and reports.
    pub fn named(&self, text: impl Display) -> String {
        let mut text = text.to_string();
        for (id, name) in self.names.lock().expect("not poisoned").iter() {
            text = text.replace(&format!("ObjectId(\"{id}\")"), &format!("ObjectId({name})"));
        }
        text
    }

    /// A value as the shell would print it, with named ObjectIds, dates in RFC 3339, and long
    /// arrays cut short.
    pub fn show(&self, value: &Bson) -> String {
        let mut out = String::new();
        self.write(&mut out, value);
        out
    }

    fn write(&self, out: &mut String, value: &Bson) {
        match value {
            Bson::Document(doc) if doc.is_empty() => out.push_str("{}"),
            Bson::Document(doc) => {
                out.push_str("{ ");
                let shown = if doc.len() > LONGEST_DOCUMENT {
                    3
                } else {
                    doc.len()
                };
                for (i, (key, value)) in doc.iter().take(shown).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "\"{key}\": ");
                    self.write(out, value);
                }
                if shown < doc.len() {
                    let _ = write!(out, ", … {} more", doc.len() - shown);
                }
                out.push_str(" }");
            }
            Bson::Array(items) => {
                out.push('[');
                let shown = if items.len() > LONGEST_ARRAY {
                    3
                } else {
                    items.len()
                };
                for (i, item) in items.iter().take(shown).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write(out, item);
                }
                if shown < items.len() {
                    let _ = write!(out, ", … {} more", items.len() - shown);
                }
                out.push(']');
            }
            Bson::ObjectId(id) => match self.names.lock().expect("not poisoned").get(id) {
                Some(name) => {
                    let _ = write!(out, "ObjectId({name})");
                }
                None => {
                    let _ = write!(out, "ObjectId(\"{id}\")");
                }
            },
            Bson::DateTime(date) => match date.try_to_rfc3339_string() {
                Ok(date) => {
                    let _ = write!(out, "DateTime(\"{date}\")");
                }
                Err(_) => {
                    let _ = write!(out, "{value}");
                }
            },
            other => {
                let _ = write!(out, "{other}");
            }
        }
    }
}

/// Prints a line of a step.
pub fn say(line: impl Display) {
    println!("    {line}");
}

/// Prints `label: a, b, c`.
pub fn list<T: Display>(label: &str, items: impl IntoIterator<Item = T>) {
    let items: Vec<String> = items.into_iter().map(|t| t.to_string()).collect();
    say(format_args!("{label}: {}", items.join(", ")));
}

/// Prints each line of `text` as a line of the step (a report, a document).
pub fn say_lines(text: impl Display) {
    for line in text.to_string().lines() {
        say(line);
    }
}
