//! The writes the ODM sends for itself: a cascade's updates, a delete rule's pulls, nullifies
//! and deletes, a tree's moves, a two-way parent's array, a bucket's or a counter's upsert.
//! Each is an [`Own`] write, offered to the maintainers of the model it writes (looked up in
//! the handle's catalog by collection, or by the model's type name when several models share
//! the collection) before it is sent, the way the user's writes are: the feature that sends it
//! says what the write is for ([`Effect`]), and the maintainers decide what that means for
//! the model (a version stamped, an unroutable upsert refused), so that no feature needs to
//! know of another's fields.
//!
//! Then it is sent in the caller's session, with the error mapping of every write of the ODM
//! (a refusal of the server names the collection and the filter), as one command: an own write
//! is one `update` or `delete` command, which the command monitor counts.

use bson::Document;
use mongodb::options::UpdateModifications;
use mongodb::ClientSession;

mod bounded;
mod modify;
mod statements;

pub(crate) use statements::{BatchWritten, Statements};

pub(crate) use modify::Returning;

use super::Odm;
use crate::catalog::ModelEntry;
use crate::{Error, Result};

/// What an own write does to the documents it writes, which decides what the maintainers add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// It keeps data derived from other documents in line (copies, latest-N arrays, inverse
    /// arrays, summaries, a tree's ancestors): nothing a writer of the document owns changes,
    /// so its version and `updated_at` stay.
    Derived,
    /// It changes a field the document's writers own (a delete rule nullifying or pulling a
    /// reference, a reassigned child's reference, a bucket's or a counter's upsert): the
    /// document's version and `updated_at` move, so that a stale replacement conflicts.
    Owned,
    /// It was prepared already, and is sent as it is: a write of the user's that a
    /// maintainer sends in a command of its own (a cascade's `findAndModify`, which returns
    /// what the cascade reads; the maintainers before that one prepared it), or an own write
    /// whose prepared update the feature read first (a reassign's).
    Relayed,
}

/// The command of an own write.
#[derive(Debug, Clone)]
pub(crate) enum Command {
    /// `update` with this document or pipeline.
    Update(UpdateModifications),
    /// `delete`.
    Delete,
    /// A replacement of the document.
    Replace(Document),
    /// `insert` of this document (the filter is not sent).
    Insert(Document),
}

/// One write the ODM sends for itself (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct Own<'a> {
    /// The collection written.
    pub collection: &'a str,
    /// The model written, by type name, when the collection holds several (kinds): its
    /// declaration is the one the maintainers read. `None`: the collection's first model.
    pub model: Option<&'static str>,
    /// The model written, when the feature has its type: its declaration whether or not the
    /// handle's catalog holds it.
    pub entry: Option<&'static ModelEntry>,
    pub filter: Document,
    pub command: Command,
    /// Every matching document, or one.
    pub many: bool,
    pub upsert: bool,
    pub effect: Effect,
    /// What sends it, as errors name it (`"delete rule"`, `"bucket add"`).
    pub purpose: &'static str,
    /// What a failure names as the document written; the filter when `None`.
    pub target: Option<String>,
    /// The update's array filters.
    pub array_filters: Option<Vec<Document>>,
    /// Outside a session: how long the server may keep the write waiting (`maxTimeMS`).
    pub max_time_ms: Option<i64>,
}

/// What an own write did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Written {
    /// Documents the filter matched (an update), or deleted (a delete).
    pub matched: u64,
    /// Documents an update changed.
    pub modified: u64,
    /// The `_id` of the document an upsert inserted.
    pub upserted_id: Option<bson::Bson>,
}

/// How the maintainers prepare an own write of a model (given by the top of the crate when the
/// handle is made: the engine sits below the list of maintainers and names none of them).
pub(crate) type OwnStages = fn(&mut Own<'_>, &ModelEntry) -> Result<()>;

impl<'a> Own<'a> {
    /// An update of the documents `filter` matches in `collection`.
    pub(crate) fn update(
        collection: &'a str,
        filter: Document,
        update: impl Into<UpdateModifications>,
        effect: Effect,
        purpose: &'static str,
    ) -> Self {
        Own {
            collection,
            model: None,
            entry: None,
            filter,
            command: Command::Update(update.into()),
            many: true,
            upsert: false,
            effect,
            purpose,
            target: None,
            array_filters: None,
            max_time_ms: None,
        }
    }

    /// A delete of the documents `filter` matches in `collection`.
    pub(crate) fn delete(collection: &'a str, filter: Document, purpose: &'static str) -> Self {
        Own {
            collection,
            model: None,
            entry: None,
            filter,
            command: Command::Delete,
            many: true,
            upsert: false,
            effect: Effect::Derived,
            purpose,
            target: None,
            array_filters: None,
            max_time_ms: None,
        }
    }

    /// A replacement of the document `filter` matches in `collection` (sent with
    /// [`Odm::modify_own`], which returns the document as it was or as it is).
    pub(crate) fn replace(
        collection: &'a str,
        filter: Document,
        replacement: Document,
        effect: Effect,
        purpose: &'static str,
    ) -> Self {
        Own {
            command: Command::Replace(replacement),
            many: false,
            ..Own::delete(collection, filter, purpose)
        }
        .effect(effect)
    }

    /// An insert of `document` into `collection`.
    pub(crate) fn insert(collection: &'a str, document: Document, purpose: &'static str) -> Self {
        Own {
            command: Command::Insert(document),
            many: false,
            ..Own::delete(collection, Document::new(), purpose)
        }
    }

    /// The same write, doing `effect` to the documents it writes.
    pub(crate) fn effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self
    }

    /// The error of this write failing with `e`, naming the target given, else the filter
    /// (formatted only then: it costs more than building the command).
    pub(crate) fn failed(&self, e: mongodb::error::Error) -> Error {
        let shown = || {
            self.target
                .clone()
                .unwrap_or_else(|| crate::error::show_filter(&self.filter))
        };
        Error::from_write(self.collection, shown, e)
    }

    /// The same write, of the model named `type_name` (one kind of the collection's models).
    pub(crate) fn of_model(mut self, type_name: &'static str) -> Self {
        self.model = Some(type_name);
        self
    }

    /// The same write, of the model `T`.
    pub(crate) fn of<T: crate::Model>(mut self) -> Self {
        self.entry = Some(T::entry());
        self
    }

    /// The same write, naming `target` (an `_id`, shown) as what it wrote when it fails.
    pub(crate) fn showing(mut self, target: String) -> Self {
        self.target = Some(target);
        self
    }

    /// The same update, with these array filters.
    pub(crate) fn array_filters(mut self, array_filters: Vec<Document>) -> Self {
        self.array_filters = Some(array_filters);
        self
    }

    /// The same write, bounded to `ms` of waiting on the server when sent outside a session.
    ///
    /// A write outside a transaction that meets a document a transaction holds waits, on the
    /// server, for that transaction to end, and holds a pooled connection meanwhile. With as
    /// many such writes as the pool has connections, the transaction cannot get a connection
    /// to commit, and all of them wait until the server ends it (60 s). Bounded, such a write
    /// fails with `MaxTimeMSExpired` (code 50) instead: nothing was written, the connection is
    /// free, and the caller runs it again. Writes in a transaction never wait (the second
    /// writer of a document gets a write conflict at once), so they are not bounded. The
    /// driver's update has no `maxTimeMS`: the bounded write is one raw `update` command, one
    /// statement per document when the filter names them by `_id` (some servers keep a
    /// multi-document update waiting past its `maxTimeMS`).
    pub(crate) fn waiting_at_most(mut self, ms: i64) -> Self {
        self.max_time_ms = Some(ms);
        self
    }

    /// The same write, of the first matching document only.
    pub(crate) fn one(mut self) -> Self {
        self.many = false;
        self
    }

    /// The same write, inserting a document when none matches.
    pub(crate) fn upsert(mut self) -> Self {
        self.upsert = true;
        self
    }
}

impl Odm {
    /// Sends `write` in `session`: offered first to the maintainers of the model it writes,
    /// then sent as one command. A model outside the handle's catalog is written as it is.
    pub(crate) async fn write_own(
        &self,
        mut write: Own<'_>,
        session: Option<&mut ClientSession>,
    ) -> Result<Written> {
        self.prepare_own(&mut write)?;
        let span = tracing::debug_span!(
            "own write",
            collection = write.collection,
            purpose = write.purpose
        );
        tracing::Instrument::instrument(self.send_own(write, session), span).await
    }

    /// Offers `write` to the maintainers of the model it writes, without sending it: for a
    /// feature that sends the prepared command itself (a `findAndModify`, which returns the
    /// document it changed).
    pub(crate) fn prepare_own(&self, write: &mut Own<'_>) -> Result<()> {
        if write.effect == Effect::Relayed {
            return Ok(());
        }
        // The model named, else (a kind the catalog holds through its enum only) the
        // collection's first.
        let catalog = self.catalog();
        let model = write.entry.or_else(|| {
            catalog
                .entry_of(write.collection, write.model)
                .or_else(|| catalog.entry_of(write.collection, None))
        });
        match model {
            Some(model) => (self.own_stages())(write, model),
            None => Ok(()),
        }
    }

    /// The one command of a prepared own write.
    async fn send_own(
        &self,
        mut write: Own<'_>,
        session: Option<&mut ClientSession>,
    ) -> Result<Written> {
        let coll = self.own_database().collection::<Document>(write.collection);
        let collection = write.collection;
        // The command and its array filters taken out: what is left names the write's failure.
        let command = std::mem::replace(&mut write.command, Command::Delete);
        let array_filters = write.array_filters.take();
        match command {
            Command::Update(UpdateModifications::Document(update))
                if write.max_time_ms.is_some() && session.is_none() =>
            {
                let ms = write.max_time_ms.unwrap_or_default();
                let array_filters = array_filters.as_ref();
                let statements =
                    bounded::statements(&write.filter, &update, array_filters, write.many);
                bounded::send(self, collection, statements, ms, |e| write.failed(e)).await
            }
            Command::Update(update) => {
                let mut action = match write.many {
                    true => coll.update_many(write.filter.clone(), update),
                    false => coll.update_one(write.filter.clone(), update),
                };
                // Said only when it holds: the command is the one the feature would send.
                if write.upsert {
                    action = action.upsert(true);
                }
                if let Some(array_filters) = array_filters {
                    action = action.array_filters(array_filters);
                }
                let sent = super::send!(action, session);
                let result = sent.map_err(|e| write.failed(e))?;
                Ok(Written {
                    matched: result.matched_count,
                    modified: result.modified_count,
                    upserted_id: result.upserted_id,
                })
            }
            Command::Replace(replacement) => {
                let action = coll
                    .replace_one(write.filter.clone(), replacement)
                    .upsert(write.upsert);
                let result = super::send!(action, session).map_err(|e| write.failed(e))?;
                Ok(Written {
                    matched: result.matched_count,
                    modified: result.modified_count,
                    upserted_id: result.upserted_id,
                })
            }
            Command::Insert(document) => {
                let id = document.get("_id").cloned();
                let sent = super::send!(coll.insert_one(document), session);
                let result = sent.map_err(|e| write.failed(e))?;
                Ok(Written {
                    matched: 1,
                    upserted_id: id.or(Some(result.inserted_id)),
                    ..Written::default()
                })
            }
            Command::Delete => {
                let sent = match write.many {
                    true => super::send!(coll.delete_many(write.filter.clone()), session),
                    false => super::send!(coll.delete_one(write.filter.clone()), session),
                };
                let result = sent.map_err(|e| write.failed(e))?;
                Ok(Written {
                    matched: result.deleted_count,
                    ..Written::default()
                })
            }
        }
    }
}
