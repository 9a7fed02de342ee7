//! Soft deletes (`#[odm(soft_delete)]`): a delete sets the model's `deleted_at` field (or the
//! field `soft_delete = "..."` names) to the time of the delete instead of removing the
//! document, and every query of the model (find, get, count, stream, pages, distinct, update,
//! replace) skips the documents where it is set, unless its filter says otherwise:
//! [`Filter::with_deleted`] reaches every document, [`Filter::only_deleted`] the marked ones.
//! [`Odm::restore`](crate::Odm::restore) clears the mark; [`Odm::purge`](crate::Odm::purge)
//! removes marked documents for good, with the delete rules a delete of them would apply.
//!
//! The document stays, so nothing else a delete does applies to it: no delete rule, no tree
//! rule, no pull of its summaries; references to it still resolve (populate and the raw
//! driver see it). Commands: one `update` (`multi` for a `delete_many`) in place of the
//! `delete`, with the same filter and the condition that the field is null or missing.
//!
//! What it does to the documents that reference it is said by their reference field:
//! `#[reference(on_soft_delete = "mark")]` marks them too, with the same time, and
//! [`Odm::restore`](crate::Odm::restore) brings back with a document the holders marked with
//! it (those whose mark has its time, not those deleted on their own before or after);
//! without it (`"leave"`, the default) they stay as they are. See [`marks`] for the commands.
//!
//! A unique index of a model with soft deletes applies to its live documents only: the
//! derive adds the soft delete's field as the index's last key, which is `null` on every live
//! document and the time of the delete on a marked one, so a deleted account's email can be
//! registered again (and restoring the deleted account then fails with
//! [`Error::DuplicateKey`](crate::Error::DuplicateKey)). `#[index(unique, forever)]` keeps a
//! value unique across deleted documents too.
//!
//! ```
//! # use odm::prelude::*;
//! #[derive(Model, Serialize, Deserialize)]
//! #[odm(collection = "notes", soft_delete)]
//! struct Note {
//!     #[serde(rename = "_id")]
//!     id: i32,
//!     text: String,
//!     deleted_at: Option<odm::bson::DateTime>,
//! }
//! assert_eq!(Note::entry().soft_delete, Some("deleted_at"));
//! let bin = Note::text().eq("old").only_deleted();
//! # let _ = bin;
//! ```

pub mod marks;
mod restore;

pub use restore::Restore;

use bson::doc;

use crate::engine::{DeleteCall, Maintainer, NextDelete, Step, Stepped, UpdateCall};
use crate::query::Scope;
use crate::transaction::TransactionMode;
use crate::{Filter, Model, Result};

/// The field of a soft delete holds the time of the delete: `Option<bson::DateTime>`.
#[diagnostic::on_unimplemented(
    message = "the field of a soft delete is an `Option<bson::DateTime>`, not `{Self}`",
    label = "not `Option<bson::DateTime>`",
    note = "`#[odm(soft_delete)]` sets the field to the time of the delete: declare it `Option<odm::bson::DateTime>` (`None` until then)"
)]
pub trait DeletedAt {}
impl DeletedAt for Option<bson::DateTime> {}

/// A model with soft deletes (`#[odm(soft_delete)]`), implemented by the derive: its filters
/// take a scope ([`Filter::with_deleted`], [`Filter::only_deleted`]), and it can be restored
/// and purged.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no soft deletes",
    label = "not a model with `#[odm(soft_delete)]`",
    note = "declare `#[odm(soft_delete)]` on `{Self}` (with a field `deleted_at: Option<odm::bson::DateTime>`): only its deleted documents can be listed, restored or purged"
)]
pub trait SoftDeleting: Model {}

impl<T> Filter<T> {
    /// The filter reaching every document, those a soft delete has marked too: a query sends
    /// it as written, without the condition on the field. A filter combined from parts
    /// (`&`, `|`, `!`) keeps the first scope a part sets.
    pub fn with_deleted(self) -> Self
    where
        T: SoftDeleting,
    {
        self.scoped(Scope::All)
    }

    /// The filter reaching the documents a soft delete has marked, and only those: the query
    /// adds `{deleted_at: {$ne: null}}`.
    pub fn only_deleted(self) -> Self
    where
        T: SoftDeleting,
    {
        self.scoped(Scope::Deleted)
    }
}

/// Soft deletes as a maintainer of deletes: first in the list, they take the delete of a model
/// that declares them, and the document stays.
pub(crate) struct SoftDelete;

impl Maintainer for SoftDelete {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        let entry = model.entry;
        entry.soft_delete.is_some()
    }

    fn delete<'a, T: Model>(
        call: DeleteCall<'a>,
        _next: NextDelete,
    ) -> Stepped<'a, DeleteCall<'a>, u64> {
        match T::entry().soft_delete {
            // A purge: the delete itself, with the rules after this one.
            _ if call.hard => Ok(Step::Pass(call)),
            Some(field) if marks::marks_holders(call.odm.catalog(), T::COLLECTION) => {
                let root = (T::COLLECTION, T::entry().type_name);
                let marked = marks::mark_with_holders(call, root, field);
                Ok(Step::Sent(Box::pin(crate::trace::step!(
                    "soft_delete_holders",
                    T::COLLECTION,
                    marked
                ))))
            }
            Some(field) => Ok(Step::Sent(Box::pin(mark::<T>(call, field)))),
            None => Ok(Step::Pass(call)),
        }
    }
}

/// Sets `field` to the server's time on what the delete's filter matches (which excludes the
/// documents already marked): the plain `update` (`multi` for `delete_many`) in place of the
/// `delete`. Returns the number of documents marked.
async fn mark<T: Model>(call: DeleteCall<'_>, field: &'static str) -> Result<u64> {
    let DeleteCall {
        odm,
        filter,
        many,
        session,
        extras,
        ..
    } = call;
    let update = UpdateCall {
        odm,
        // Shown only when the update fails.
        shown: crate::error::Shown::of(&filter),
        filter,
        update: doc! { "$currentDate": { field: { "$type": "date" } } },
        array_filters: Vec::new(),
        guards: Vec::new(),
        many,
        upsert: false,
        mode: TransactionMode::Auto,
        loaded: None,
        session,
        extras,
    };
    let coll = odm.cached_collection::<T>();
    Ok(crate::engine::write::update::<T>(update, coll)
        .await?
        .modified_count)
}
