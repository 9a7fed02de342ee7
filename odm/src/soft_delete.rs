//! Soft deletes (`#[odm(soft_delete)]`): a delete sets the model's `deleted_at` field (or the
//! field `soft_delete = "..."` names) to the server's time instead of removing the document,
//! and every query of the model (find, get, count, stream, pages, distinct, update, replace,
//! delete) skips the documents where it is set.
//!
//! The document stays, so nothing else a delete does applies to it: no delete rule, no tree
//! rule, no pull of its summaries; references to it still resolve (populate and the raw
//! driver see it). Commands: one `update` (`multi` for a `delete_many`) in place of the
//! `delete`, with the same filter and the condition that the field is null or missing.
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
//! ```

use bson::doc;

use crate::engine::{DeleteCall, Maintainer, NextDelete, Step, Stepped, UpdateCall};
use crate::transaction::TransactionMode;
use crate::{Model, Result};

/// The field of a soft delete holds the time of the delete: `Option<bson::DateTime>`.
#[diagnostic::on_unimplemented(
    message = "the field of a soft delete is an `Option<bson::DateTime>`, not `{Self}`",
    label = "not `Option<bson::DateTime>`",
    note = "`#[odm(soft_delete)]` sets the field to the time of the delete: declare it `Option<odm::bson::DateTime>` (`None` until then)"
)]
pub trait DeletedAt {}
impl DeletedAt for Option<bson::DateTime> {}

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
    };
    let coll = odm.cached_collection::<T>();
    Ok(crate::engine::write::update::<T>(update, coll)
        .await?
        .modified_count)
}
