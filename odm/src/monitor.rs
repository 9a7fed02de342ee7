//! Counting the commands a client sends, through the driver's command monitoring.
//!
//! Every `odm` operation documents how many commands it sends; a [`CommandLog`] attached to
//! the client shows it. Tests assert on it, and the examples print it.

use std::sync::{Arc, Mutex, PoisonError};

use bson::Document;
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::ClientOptions;

/// One command as the driver sent it.
#[derive(Debug, Clone)]
pub struct SentCommand {
    /// The command's name (`find`, `insert`, `createIndexes`, ...).
    pub name: String,
    /// The database it was sent to.
    pub db: String,
    /// The command document, when the log keeps documents (see [`CommandLog::with_documents`]).
    pub command: Option<Document>,
}

/// A shared, clonable log of the commands a client sends.
#[derive(Debug, Clone, Default)]
pub struct CommandLog {
    inner: Arc<Mutex<Vec<SentCommand>>>,
    keep_documents: bool,
}

impl CommandLog {
    /// A log that keeps command names only (cheap enough for benchmarks).
    pub fn new() -> Self {
        CommandLog::default()
    }

    /// A log that also keeps each command document, to assert on filters and updates.
    pub fn with_documents() -> Self {
        CommandLog {
            inner: Arc::default(),
            keep_documents: true,
        }
    }

    /// Installs the log as the command event handler of `options`.
    pub fn attach(&self, options: &mut ClientOptions) {
        let log = self.clone();
        options.command_event_handler = Some(EventHandler::callback(move |ev: CommandEvent| {
            if let CommandEvent::Started(started) = ev {
                let sent = SentCommand {
                    name: started.command_name,
                    db: started.db,
                    command: log.keep_documents.then_some(started.command),
                };
                log.lock().push(sent);
            }
        }));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SentCommand>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Number of commands sent since the last [`CommandLog::take`] or [`CommandLog::clear`].
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// Number of commands named `name` sent since the last take or clear.
    pub fn count_of(&self, name: &str) -> usize {
        self.lock().iter().filter(|c| c.name == name).count()
    }

    /// Names of the commands sent since the last take or clear, in order.
    pub fn names(&self) -> Vec<String> {
        self.lock().iter().map(|c| c.name.clone()).collect()
    }

    /// The commands sent since the last take or clear; the log is emptied.
    pub fn take(&self) -> Vec<SentCommand> {
        std::mem::take(&mut *self.lock())
    }

    /// Empties the log.
    pub fn clear(&self) {
        self.lock().clear();
    }
}
