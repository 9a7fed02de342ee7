//! Deleting documents: `delete_one`, `delete_many` and `delete_document`.

use mongodb::options::WriteConcern;
use mongodb::ClientSession;

use super::into_future;
use super::DeleteFuture;
use crate::engine::write::DeleteSending;
use crate::engine::{DeleteCall, Sending};
use crate::query::Filter;
use crate::{Model, Odm};

/// Builder returned by [`Odm::delete_one`] and [`Odm::delete_many`]; resolves to the number of
/// documents deleted. Sends one `delete` when nothing references the model and nothing keeps a
/// summary of it; otherwise the delete rules' plan (see [`crate::relations`]), each of its
/// commands once per [chunk](crate::batch) of the ids it names, and, outside a caller's
/// session, the pull of the deleted documents' summaries once more after the delete is visible
/// (so that an insert copying them while they were deleted keeps no summary of them). A plan naming more than 16 MiB
/// of ids does not run in a transaction the ODM opens: the transaction is abandoned
/// (`abortTransaction`) and the plan is read and run again without one, in batches. A tree's
/// nodes are deleted by the tree's rule, with these rules after it: see [`crate::tree`]. A
/// model with soft deletes sends one `update` marking the documents instead, and nothing else:
/// see [`crate::soft_delete`].
#[must_use = "the delete runs when awaited"]
#[derive(Debug)]
pub struct Delete<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    many: bool,
    hard: bool,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
    extras: Option<Box<crate::engine::Extras>>,
}

impl<'a, T: Model> Delete<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>, many: bool) -> Self {
        Delete {
            odm,
            filter,
            many,
            hard: false,
            session: None,
            concern: None,
            extras: None,
        }
    }

    /// The delete of a purge (see [`Odm::purge`]): the documents are removed even from a
    /// model with soft deletes.
    pub(crate) fn hard(mut self) -> Self {
        self.hard = true;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The delete as one future: offered to the maintainers, else the plain `delete`.
    fn start(mut self) -> DeleteSending<'a> {
        crate::engine::concerned!(return Sending::Boxed, self: Delete.start);
        // A delete marks live documents only, whatever the filter's scope; a purge reaches
        // the documents of its own.
        let filter = match self.hard {
            true => self.filter,
            false => self.filter.scoped(crate::query::Scope::Live),
        };
        match crate::engine::model_filter(filter) {
            Ok(filter) => match super::encode::let_checked::<T>(self.odm, &self.extras) {
                Ok(()) => crate::pipeline::delete::<T>(DeleteCall {
                    odm: self.odm,
                    filter,
                    many: self.many,
                    hard: self.hard,
                    session: self.session,
                    extras: self.extras,
                }),
                Err(e) => Sending::failed(e),
            },
            Err(e) => Sending::failed(e),
        }
    }
}

crate::engine::write_options!(Delete, let);

into_future!(Delete => u64, "delete", |n: &u64| Some(*n), start -> DeleteFuture<'a>);

impl Odm {
    /// Deletes one loaded document: `delete` by its `_id`, and for a sharded model by its shard
    /// key values too, so that the command is routed to the document's shard. Otherwise as
    /// [`Odm::delete_one`] (delete rules, tree rules): same commands.
    pub fn delete_document<'a, T: Model>(&'a self, doc: &T) -> Delete<'a, T> {
        Delete::new(self, self.document_filter(doc), false)
    }
}
