//! The operations of a model with soft deletes (see [`crate::soft_delete`]): its marked
//! documents restored, or purged for good.

use crate::ops::Delete;
use crate::query::{Filter, Scope};
use crate::soft_delete::{Restore, SoftDeleting};
use crate::Odm;

impl Odm {
    /// Clears the soft delete's mark of the marked documents `filter` matches (its scope
    /// aside: only marked documents are restored), and of the holders marked with them
    /// (`#[reference(on_soft_delete = "mark")]`). Resolves to the number of documents
    /// restored. Sends one `update` (`multi`), plus the reads and writes of the holders
    /// ([`marks`](crate::soft_delete::marks)).
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize)]
    /// # #[odm(collection = "notes", soft_delete)]
    /// # struct Note {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     deleted_at: Option<odm::bson::DateTime>,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let restored = odm.restore(Note::id_field().eq(1)).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn restore<T: SoftDeleting>(&self, filter: Filter<T>) -> Restore<'_, T> {
        Restore::new(self, filter)
    }

    /// Removes for good the documents a soft delete has marked among those `filter` matches,
    /// and applies to them the delete rules a delete of a model without soft deletes would
    /// (restrict, nullify, pull, cascade, the pull of their summaries): the same commands as
    /// [`Odm::delete_many`] of a model without soft deletes. A filter with the scope
    /// [`with_deleted`](Filter::with_deleted) purges the live documents it matches too, at
    /// once (the erasure of an account); [`only_deleted`](Filter::only_deleted) is the default.
    /// Resolves to the number of documents removed.
    pub fn purge<T: SoftDeleting>(&self, filter: Filter<T>) -> Delete<'_, T> {
        let filter = match filter.scope() {
            Scope::Live => filter.scoped(Scope::Deleted),
            _ => filter,
        };
        Delete::new(self, filter, true).hard()
    }
}
