//! Deleting with the delete rules of every referencing field.
//!
//! A delete runs in two passes. The plan reads: the ids to delete, then, field by field, the
//! documents each rule touches (following cascades), refusing the whole delete if a
//! `restrict` rule finds a reference. The execution writes: pulls and nullifies first, then
//! the deletes, children before parents. With a session (the caller's, or one the ODM opens
//! when the deployment has transactions) everything is one transaction; without, the order
//! above means an interruption can leave references removed, never dangling. The summaries
//! of the deleted documents kept elsewhere are pulled once, when the delete is visible to
//! other writers (see `execute::Resend`).

mod execute;
mod holders;
mod plan;

use bson::Document;
use mongodb::ClientSession;

use super::{OnDelete, RefKind};
use crate::{Odm, Result};

use execute::execute;
use execute::Resend;
use plan::delete_in;
pub(crate) use plan::deleted_by_reference;

pub use crate::error::DeleteRestricted;

/// Whether a delete from `collection` has rules to apply: a reference into it, or a summary
/// of its documents kept elsewhere (pulled when they go).
pub(crate) fn has_rules(catalog: &crate::catalog::Catalog, collection: &str) -> bool {
    let summarized = catalog.copies_from(collection).iter().any(|c| {
        matches!(
            c.kind,
            crate::catalog::CopyKind::Summary { .. } | crate::catalog::CopyKind::Latest { .. }
        )
    });
    summarized || !catalog.references_to(collection).is_empty()
}

/// The delete rules as a maintainer of deletes: they take the delete of a model that has rules
/// (see [`has_rules`]) and send it as their plan.
pub(crate) struct DeleteRules;

impl crate::engine::Maintainer for DeleteRules {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        model.related
    }

    fn delete<'a, T: crate::Model>(
        call: crate::engine::DeleteCall<'a>,
        _next: crate::engine::NextDelete,
    ) -> crate::engine::Stepped<'a, crate::engine::DeleteCall<'a>, u64> {
        if !has_rules(call.odm.catalog(), T::COLLECTION) {
            return Ok(crate::engine::Step::Pass(call));
        }
        let rules = delete_with_rules(
            call.odm,
            T::COLLECTION,
            call.filter,
            call.many,
            call.session,
        );
        Ok(crate::engine::Step::Sent(Box::pin(crate::trace::step!(
            "delete_rules",
            T::COLLECTION,
            rules
        ))))
    }
}

/// Deletes what `filter` matches in `collection` (one document unless `many`), applying the
/// delete rules of every registered reference into it. Returns the number of documents deleted
/// from `collection` itself.
///
/// Commands: one `find` for the ids (a model nothing references is deleted with one `delete`,
/// without any of this), then per referencing field one `aggregate` (restrict: a count) or,
/// for a cascade into a collection that is itself referenced, one `find` of the children's
/// ids (recursively); then one `update` per pull/nullify field, one `delete` by filter per
/// cascade into an unreferenced collection, and one `delete` per other collection; for sources
/// of latest-N arrays, one `find` of their parents before and, after the deletes, one
/// `aggregate` recomputing those parents' arrays and one `update` per parent; plus
/// `hello` once per `Odm` and the transaction's `commitTransaction` when the ODM opened one;
/// and one `update` per collection holding summaries of the deleted documents, sent once,
/// when the delete is visible (after the commit, or after the deletes without a transaction;
/// last in a caller's session): see [`Resend`]. Deleting a part listed by products is one
/// `find`, one `delete`, `commitTransaction` and one `update` of the products.
/// Every command naming ids is sent once per [chunk](crate::batch) of them. A plan naming more
/// than 16 MiB of ids, or one the server finds too large for a transaction, is abandoned with
/// `abortTransaction` (nothing written) and planned and run again without a transaction.
pub(crate) async fn delete_with_rules(
    odm: &Odm,
    collection: &str,
    filter: Document,
    many: bool,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let (deleted, again) = match session {
        // The caller commits: what the delete pulled is all it can do (see the consistency
        // chapter: an insert outside that transaction may keep a summary until the sweep).
        Some(s) => {
            let plan = delete_in(odm, collection, filter, many, Some(&mut *s)).await?;
            let (deleted, pulls) = execute(odm, plan, Some(&mut *s)).await?;
            pulls.send(odm, Some(s)).await?;
            return Ok(deleted);
        }
        None if odm.supports_transactions().await? => {
            let outcome = crate::transaction::in_transaction(
                odm,
                &(collection, &filter, many),
                |odm, s, (collection, filter, many)| {
                    Box::pin(plan_and_execute(
                        odm,
                        collection,
                        (*filter).clone(),
                        *many,
                        s,
                    ))
                },
            )
            .await;
            match outcome {
                Err(e) if crate::transaction::is_too_large(&e) => {
                    // More than one transaction can hold: nothing was written. The same plan,
                    // without a transaction, in the order that never leaves a reference
                    // dangling (see the module's documentation).
                    let plan = delete_in(odm, collection, filter, many, None).await?;
                    execute(odm, plan, None).await?
                }
                other => other?,
            }
        }
        None => {
            let plan = delete_in(odm, collection, filter, many, None).await?;
            execute(odm, plan, None).await?
        }
    };
    again.send(odm, None).await?;
    Ok(deleted)
}

/// The plan and its commands in the ODM's own transaction `s`; a plan too large for one
/// transaction is refused before anything is written.
async fn plan_and_execute(
    odm: &Odm,
    collection: &str,
    filter: Document,
    many: bool,
    s: &mut ClientSession,
) -> Result<(u64, Resend)> {
    let plan = delete_in(odm, collection, filter, many, Some(&mut *s))
        .await?
        .fits_one_transaction()?;
    execute(odm, plan, Some(s)).await
}

/// After documents of `collection` were deleted by another program (`keys`: each one's
/// `documentKey`, its `_id` and shard key): the delete rules of every reference into them
/// applied as a delete through the ODM would have, but that a `restrict` rule cannot refuse
/// what is done. The holders a `restrict` rule finds are left as they are and returned, the
/// other rules applied. Idempotent: the plan reads what still references the ids.
///
/// Commands: those of [`delete_with_rules`]'s plan and execution without a transaction, less
/// the `delete` of the ids themselves (never sent: a document inserted again with one of them
/// is left alone), plus one `aggregate` per `restrict` check and, for a check that finds
/// holders, one `find` of the first [`DeleteRestricted::LISTED`] of them.
pub(crate) async fn after_deleted(
    odm: &Odm,
    collection: &str,
    keys: Vec<Document>,
) -> Result<Vec<DeleteRestricted>> {
    if !has_rules(odm.catalog(), collection) {
        return Ok(Vec::new());
    }
    let ids: Vec<bson::Bson> = keys.iter().filter_map(|k| k.get("_id").cloned()).collect();
    let mut plan = plan::Plan::default();
    let root = format!("`{collection}` (deleted by another program)");
    plan::plan_level(
        odm,
        &mut plan,
        collection.to_owned(),
        (ids, keys),
        vec![root],
        None,
    )
    .await?;
    // The documents themselves are gone: deleting them again could only delete one another
    // program inserted since with the same `_id` (its rules' effects follow from its own
    // delete's event, if it comes).
    if let Some((_, root)) = plan.deletes.first_mut() {
        root.clear();
    }
    let violations = plan.violations(odm, None, false).await?;
    let (_, again) = execute(odm, plan, None).await?;
    again.send(odm, None).await?;
    Ok(violations)
}
