//! `Odm::restore`: the mark of a soft delete cleared.

use mongodb::options::WriteConcern;
use mongodb::ClientSession;

use super::SoftDeleting;
use crate::query::Scope;
use crate::{Filter, Model, Odm, Result};

/// Builder returned by [`Odm::restore`]; resolves to the number of documents restored.
///
/// Sends one `update` (`multi`) of the marked documents the filter matches, setting the soft
/// delete's field to `null`; for a model whose holders a soft delete marks too
/// (`on_soft_delete = "mark"`), the reads and writes of [`marks`](super::marks). A restore
/// that would make a unique value appear twice among the live documents (a new account
/// registered with the deleted one's email) fails with
/// [`Error::DuplicateKey`](crate::Error::DuplicateKey) and restores nothing of that document.
#[must_use = "the restore runs when awaited"]
#[derive(Debug)]
pub struct Restore<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
}

impl<'a, T: SoftDeleting> Restore<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>) -> Self {
        Restore {
            odm,
            filter,
            session: None,
            concern: None,
        }
    }
}

impl<'a, T: Model> Restore<'a, T> {
    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(mut self) -> Result<u64> {
        crate::engine::concerned!(return await, self: Restore.sent);
        self.sent().await
    }

    /// The restore, on this builder's handle.
    async fn sent(self) -> Result<u64> {
        let Some(field) = T::entry().soft_delete else {
            return Ok(0);
        };
        // Only marked documents are restored, whatever the filter's scope.
        let filter = crate::engine::model_filter(self.filter.scoped(Scope::All))?;
        let filter = crate::engine::soft_deleted(field, Scope::Deleted, filter);
        let root = (T::COLLECTION, T::entry().type_name);
        super::marks::restore(self.odm, root, field, filter, self.session).await
    }
}

crate::engine::write_options!(@concern Restore);

impl<'a, T: Model> std::future::IntoFuture for Restore<'a, T> {
    type Output = Result<u64>;
    type IntoFuture = futures_util::future::BoxFuture<'a, Result<u64>>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("restore", T::COLLECTION);
        crate::trace::boxed(span, self.run(), |n: &u64| Some(*n))
    }
}
