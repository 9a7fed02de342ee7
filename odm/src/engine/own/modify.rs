//! An own write that returns the document it wrote: one `findAndModify` (an update, a
//! replacement or a delete of one document), for a feature that reads what the write found
//! (a cascade the values its copies take, a tree's move the node's old parent).

use bson::Document;
use mongodb::options::ReturnDocument;
use mongodb::ClientSession;

use super::{Command, Odm, Own};
use crate::{Error, Result};

/// What an own `findAndModify` returns: the document before or after the write, projected.
#[derive(Debug, Clone, Default)]
pub(crate) struct Returning {
    /// The fields returned; every field when `None`.
    pub projection: Option<Document>,
    /// The document as the write left it (`After`), or as it was (`Before`); `None` leaves
    /// it to the server's default (as it was) without saying so in the command.
    pub which: Option<ReturnDocument>,
    /// Which document is taken when several match (a user's `find_one_and_delete`).
    pub sort: Option<Document>,
}

impl Returning {
    /// The document as it was, with these fields.
    pub(crate) fn before(projection: Document) -> Self {
        Returning {
            projection: Some(projection),
            which: Some(ReturnDocument::Before),
            sort: None,
        }
    }

    /// The document as it was, with these fields, the command saying nothing of which.
    pub(crate) fn as_found(projection: Document) -> Self {
        Returning {
            projection: Some(projection),
            which: None,
            sort: None,
        }
    }

    /// The document as the write left it, with these fields.
    pub(crate) fn after(projection: Document) -> Self {
        Returning {
            projection: Some(projection),
            which: Some(ReturnDocument::After),
            sort: None,
        }
    }
}

impl Odm {
    /// Sends `write` (of one document) as one `findAndModify` in `session`, offered first to
    /// the maintainers of the model it writes as [`Odm::write_own`] does: the document it
    /// found (`None` when nothing matched), as `returning` says.
    pub(crate) async fn modify_own(
        &self,
        mut write: Own<'_>,
        returning: Returning,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<Document>> {
        self.prepare_own(&mut write)?;
        let span = tracing::debug_span!(
            "own write",
            collection = write.collection,
            purpose = write.purpose
        );
        tracing::Instrument::instrument(self.send_modify(write, returning, session), span).await
    }

    async fn send_modify(
        &self,
        mut write: Own<'_>,
        returning: Returning,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<Document>> {
        let coll = self.own_database().collection::<Document>(write.collection);
        let filter = write.filter.clone();
        // The command and its array filters taken out: what is left names the write's failure.
        let command = std::mem::replace(&mut write.command, Command::Delete);
        let array_filters = write.array_filters.take();
        let fail = |e| write.failed(e);
        let (which, sort) = (returning.which, returning.sort);
        match command {
            Command::Update(update) => {
                let mut action = coll.find_one_and_update(filter, update);
                if let Some(which) = which {
                    action = action.return_document(which);
                }
                if let Some(projection) = returning.projection {
                    action = action.projection(projection);
                }
                if let Some(sort) = sort {
                    action = action.sort(sort);
                }
                // Said only when it holds: the command is the one the feature would send.
                if write.upsert {
                    action = action.upsert(true);
                }
                if let Some(array_filters) = array_filters {
                    action = action.array_filters(array_filters);
                }
                super::super::send!(action, session).map_err(fail)
            }
            Command::Replace(replacement) => {
                // `upsert` is always said (`upsert: false` too), as odm's replacements are.
                let mut action = coll
                    .find_one_and_replace(filter, replacement)
                    .upsert(write.upsert);
                if let Some(which) = which {
                    action = action.return_document(which);
                }
                if let Some(projection) = returning.projection {
                    action = action.projection(projection);
                }
                if let Some(sort) = sort {
                    action = action.sort(sort);
                }
                super::super::send!(action, session).map_err(fail)
            }
            Command::Insert(_) => Err(Error::Unsupported(format!(
                "{} of `{}`: an insert returns no document it found",
                write.purpose, write.collection
            ))),
            Command::Delete => {
                let mut action = coll.find_one_and_delete(filter);
                if let Some(projection) = returning.projection {
                    action = action.projection(projection);
                }
                if let Some(sort) = sort {
                    action = action.sort(sort);
                }
                super::super::send!(action, session).map_err(fail)
            }
        }
    }
}
