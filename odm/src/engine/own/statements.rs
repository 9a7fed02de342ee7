//! Several own updates of one collection, sent as statements of as few `update` commands as
//! fit (at most [`MAX_WRITE_BATCH`] statements and about [`MAX_IDS_BYTES`] each): a repair of
//! many documents, each with its own filter and update, or two statements that must run in
//! order. Each is offered to the maintainers of the model it writes, as one write is.
//!
//! [`MAX_WRITE_BATCH`]: crate::batch::MAX_WRITE_BATCH
//! [`MAX_IDS_BYTES`]: crate::batch::MAX_IDS_BYTES

use bson::{doc, Bson, Document};
use mongodb::options::UpdateModifications;
use mongodb::ClientSession;

use super::{Command, Odm, Own};
use crate::{Error, Result};

/// A statement the server refused (the command itself succeeded).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refused {
    /// Its place among the writes given.
    pub index: usize,
    /// The server's error code.
    pub code: i32,
    pub message: String,
}

/// What several own updates did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AllWritten {
    /// Documents the filters matched.
    pub matched: u64,
    /// Documents the updates changed.
    pub modified: u64,
    /// The statements refused, in order. Ordered writes stop at the first.
    pub refused: Vec<Refused>,
}

impl Odm {
    /// Sends `writes`, updates of one collection, as the statements of `update` commands in
    /// `session`, each offered first to the maintainers of the model it writes. `ordered`:
    /// each command is ordered, and none is sent after a refused statement. A failure of a
    /// whole command names `shown` (what the statements write, as errors say it).
    ///
    /// Commands: one `update` per batch (one for up to 100,000 small statements); none when
    /// `writes` is empty.
    pub(crate) async fn write_own_all(
        &self,
        writes: Vec<Own<'_>>,
        ordered: bool,
        shown: &str,
        session: Option<&mut ClientSession>,
    ) -> Result<AllWritten> {
        let Some(collection) = writes.first().map(|w| w.collection.to_owned()) else {
            return Ok(AllWritten::default());
        };
        let mut statements = Vec::with_capacity(writes.len());
        for mut write in writes {
            debug_assert_eq!(write.collection, collection, "one collection per command");
            self.prepare_own(&mut write)?;
            statements.push(statement(write)?);
        }
        let span = tracing::debug_span!("own writes", collection = collection.as_str());
        let sent = self.send_statements(&collection, statements, ordered, shown, session);
        tracing::Instrument::instrument(sent, span).await
    }

    async fn send_statements(
        &self,
        collection: &str,
        statements: Vec<Document>,
        ordered: bool,
        shown: &str,
        session: Option<&mut ClientSession>,
    ) -> Result<AllWritten> {
        let kind = Statements::Update;
        let written = self
            .write_statements(collection, kind, statements, ordered, shown, session)
            .await;
        if let Some((_, e)) = written.failed.into_iter().next() {
            return Err(e);
        }
        Ok(AllWritten {
            matched: written.n,
            modified: written.modified,
            refused: written.refused,
        })
    }
}

/// The write commands a batch of the caller's statements is sent as: `insert` (statements are
/// documents), `update` (`{q, u, ...}`), `delete` (`{q, limit}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Statements {
    Insert,
    Update,
    Delete,
}

/// What a batch of the caller's statements did, by the server's replies.
#[derive(Debug, Default)]
pub(crate) struct BatchWritten {
    /// `n`: documents inserted, matched by the updates, or deleted.
    pub n: u64,
    /// `nModified`: documents the updates changed.
    pub modified: u64,
    /// Documents the updates' upserts inserted.
    pub upserted: u64,
    /// The statements refused, numbered from the first given. Ordered writes stop at the first.
    pub refused: Vec<Refused>,
    /// The commands that failed as a whole (a lost connection, a statement the server cannot
    /// read), each with the place of its first statement. Ordered, nothing after the first
    /// was sent.
    pub failed: Vec<(usize, Error)>,
}

impl Odm {
    /// Sends `statements`, writes of the caller's on `collection` that no maintainer concerns
    /// (prepared by the operation as its plain command would be), as `kind` commands: one per
    /// batch of at most [`crate::batch::MAX_WRITE_BATCH`] statements and about
    /// [`crate::batch::MAX_IDS_BYTES`], on the primary, with the handle's write concern
    /// outside a session. `ordered`: each command ordered, none sent after a refusal. A
    /// failure of a whole command names `shown` (ordered, it ends the batches); what the other
    /// commands did is still counted.
    pub(crate) async fn write_statements(
        &self,
        collection: &str,
        kind: Statements,
        statements: Vec<Document>,
        ordered: bool,
        shown: &str,
        mut session: Option<&mut ClientSession>,
    ) -> BatchWritten {
        let (name, field) = match kind {
            Statements::Insert => ("insert", "documents"),
            Statements::Update => ("update", "updates"),
            Statements::Delete => ("delete", "deletes"),
        };
        let mut all = BatchWritten::default();
        let mut first = 0;
        for batch in batches(statements) {
            let count = batch.len();
            let command = doc! { name: collection, field: batch, "ordered": ordered };
            let command = match session {
                None => self.with_own_concern(command),
                Some(_) => command,
            };
            let action = self.own_database().run_command(command);
            let reply = match super::super::send!(action, session.as_deref_mut()) {
                Ok(reply) => reply,
                Err(e) => {
                    let e = Error::from_write(collection, || shown.to_owned(), e);
                    all.failed.push((first, e));
                    if ordered {
                        break;
                    }
                    first += count;
                    continue;
                }
            };
            all.n += count_of(&reply, "n");
            all.modified += count_of(&reply, "nModified");
            all.upserted += reply.get_array("upserted").map_or(0, |u| u.len() as u64);
            all.refused.extend(refused(&reply, first));
            if ordered && !all.refused.is_empty() {
                break;
            }
            first += count;
        }
        all
    }
}

impl Own<'_> {
    /// The statement of this update in an `update` command: `{q, u}`, with `multi`, `upsert`
    /// and `arrayFilters` only when they say something. As it is: sent by
    /// [`Odm::write_own_all`] once prepared, shown as it is by a plan.
    pub(crate) fn into_statement(self) -> Result<Document> {
        statement(self)
    }
}

fn statement(write: Own<'_>) -> Result<Document> {
    let u = match write.command {
        Command::Update(UpdateModifications::Document(update)) => Bson::Document(update),
        Command::Update(UpdateModifications::Pipeline(stages)) => {
            Bson::Array(stages.into_iter().map(Bson::Document).collect())
        }
        _ => {
            return Err(Error::Unsupported(format!(
                "{} of `{}`: only updates are sent as statements",
                write.purpose, write.collection
            )))
        }
    };
    let mut statement = doc! { "q": write.filter, "u": u };
    if write.many {
        statement.insert("multi", true);
    }
    if write.upsert {
        statement.insert("upsert", true);
    }
    if let Some(array_filters) = write.array_filters {
        statement.insert("arrayFilters", array_filters);
    }
    Ok(statement)
}

/// `statements` in batches of at most [`crate::batch::MAX_WRITE_BATCH`] statements, each
/// ending before the statement that would take it past [`crate::batch::MAX_IDS_BYTES`] (a
/// statement larger than that goes alone), so that no command passes the server's 16 MiB.
fn batches(statements: Vec<Document>) -> Vec<Vec<Document>> {
    let mut out = Vec::new();
    let mut batch = Vec::new();
    let mut size = 0;
    for statement in statements {
        let len = bson::serialize_to_vec(&statement).map_or(0, |v| v.len());
        let full = batch.len() >= crate::batch::MAX_WRITE_BATCH
            || size + len > crate::batch::MAX_IDS_BYTES;
        if full && !batch.is_empty() {
            out.push(std::mem::take(&mut batch));
            size = 0;
        }
        size += len;
        batch.push(statement);
    }
    if !batch.is_empty() {
        out.push(batch);
    }
    out
}

/// A count of the reply (`n`, `nModified`), as `i32` or `i64`.
pub(super) fn count_of(reply: &Document, field: &str) -> u64 {
    match reply.get(field) {
        Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
        Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
        _ => 0,
    }
}

/// The refused statements of a reply, numbered from `first`.
fn refused(reply: &Document, first: usize) -> Vec<Refused> {
    let Ok(errors) = reply.get_array("writeErrors") else {
        return Vec::new();
    };
    errors
        .iter()
        .filter_map(Bson::as_document)
        .map(|e| Refused {
            index: first
                + e.get_i32("index")
                    .map_or(0, |i| usize::try_from(i).unwrap_or(0)),
            code: e.get_i32("code").unwrap_or_default(),
            message: e.get_str("errmsg").unwrap_or("refused").to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_ends_before_the_statement_that_would_take_it_past_the_size() {
        let big = "x".repeat(crate::batch::MAX_IDS_BYTES / 2);
        let huge = "x".repeat(crate::batch::MAX_IDS_BYTES + 1);
        let statements = vec![
            doc! { "q": { "_id": 1 }, "u": { "$set": { "a": &big } } },
            doc! { "q": { "_id": 2 }, "u": { "$set": { "a": &big } } },
            doc! { "q": { "_id": 3 }, "u": { "$set": { "a": 1 } } },
            doc! { "q": { "_id": 4 }, "u": { "$set": { "a": &huge } } },
            doc! { "q": { "_id": 5 }, "u": { "$set": { "a": 1 } } },
        ];
        let sizes: Vec<usize> = batches(statements).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![1, 2, 1, 1]);
    }

    #[test]
    fn a_statement_says_multi_and_upsert_only_when_they_hold() {
        let one = Own::update(
            "t",
            doc! { "_id": 1 },
            doc! { "$set": { "a": 1 } },
            super::super::Effect::Derived,
            "repair",
        )
        .one();
        assert_eq!(
            statement(one).unwrap(),
            doc! { "q": { "_id": 1 }, "u": { "$set": { "a": 1 } } }
        );
        let many = Own::update(
            "t",
            doc! {},
            doc! { "$set": { "a": 1 } },
            super::super::Effect::Derived,
            "repair",
        )
        .upsert();
        assert_eq!(
            statement(many).unwrap(),
            doc! { "q": {}, "u": { "$set": { "a": 1 } }, "multi": true, "upsert": true }
        );
    }
}
