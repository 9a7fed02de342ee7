//! Running a delete's plan: the rules' writes, then the deletes, children first.

use bson::Document;
use mongodb::ClientSession;

use crate::document::IdKey;
use crate::engine::{Effect, Own};
use crate::{Odm, Result};

use super::holders::{Change, Matching};
use super::plan::Plan;

/// The pulls of summaries of the deleted documents (and the `null` of optional single ones),
/// sent once, when the delete is visible to every other writer: after the ODM's transaction
/// commits, or after the deletes without one; in the caller's session, at the end of the
/// plan's writes (the caller commits).
///
/// An insert copying a source reads it, writes, then re-reads it (see
/// [`crate::denormalize`]'s `settle`) and takes out its summary when the source is gone. A
/// pull inside the delete's transaction would read its snapshot, which cannot hold a document
/// inserted meanwhile, and an insert whose re-read still saw the source would keep its summary.
/// Sent once the delete is visible, the one `update` finds the summaries stored before it and
/// those of every insert whose re-read still saw the source (stored before that re-read); an
/// insert re-reading later finds the source gone. So one command per collection of summaries
/// serves both: between the pull and the inserts, no summary of a deleted source outlives the
/// delete. Until it is sent (and if the program stops before), a reader may see a summary of a
/// deleted document, as it may see a copy between an update and its cascade;
/// [`Odm::verify_copies`](crate::Odm::verify_copies) finds and removes one left behind.
#[must_use = "send the summaries' pulls once the delete is visible"]
pub(super) struct Resend(Vec<(Matching, Change)>);

impl Resend {
    /// One `update` per collection holding summaries of the deleted documents (per chunk of
    /// ids), in `session` when the caller's; nothing when they have none.
    pub(super) async fn send(
        self,
        odm: &Odm,
        mut session: Option<&mut ClientSession>,
    ) -> Result<()> {
        for (holders, change) in self.0 {
            write_update(odm, &holders, &change, session.as_deref_mut()).await?;
        }
        Ok(())
    }
}

/// One `update_many` per [chunk](crate::batch) of `holders`' ids, applying `change`.
pub(super) async fn write_update(
    odm: &Odm,
    holders: &Matching,
    change: &Change,
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    for chunk in holders.chunks(&holders.ids, change.budget()) {
        let filter = holders.filter(chunk.clone());
        let update = change.update(&chunk);
        let effect = match holders.owner {
            Some(_) => Effect::Owned,
            None => Effect::Derived,
        };
        let mut write = Own::update(&holders.collection, filter, update, effect, "delete rule");
        if let Some(owner) = holders.owner {
            write = write.of_model(owner);
        }
        odm.write_own(write, session.as_deref_mut()).await?;
    }
    Ok(())
}

/// The plan's writes, each sent per [chunk](crate::batch) of the ids it names, but the pulls of
/// summaries; returns the number of documents deleted from the root collection and those
/// pulls, to send once the delete is visible (see [`Resend`]).
pub(super) async fn execute(
    odm: &Odm,
    plan: Plan,
    mut session: Option<&mut ClientSession>,
) -> Result<(u64, Resend)> {
    let mut again = Vec::new();
    for (i, (holders, change)) in plan.updates.into_iter().enumerate() {
        if plan.summaries.contains(&i) {
            again.push((holders, change));
        } else {
            write_update(odm, &holders, &change, session.as_deref_mut()).await?;
        }
    }
    for holders in plan.filter_deletes {
        for chunk in holders.chunks(&holders.ids, crate::batch::MAX_IDS_BYTES) {
            let write = Own::delete(&holders.collection, holders.filter(chunk), "delete rule");
            odm.write_own(write, session.as_deref_mut()).await?;
        }
    }
    let mut root_deleted = 0;
    // Children (reached later) are deleted before their parents; the first entry is the root.
    // One entry of `keyed` per entry of `deletes`: pushed together.
    let deletes: Vec<_> = plan.deletes.into_iter().zip(plan.keyed).collect();
    for (i, ((collection, ids), keyed)) in deletes.into_iter().enumerate().rev() {
        let carrier = crate::catalog::KeyCarrier::of(odm.catalog(), &collection);
        let read: std::collections::HashMap<IdKey, &Document> = keyed
            .iter()
            .filter_map(|d| Some((IdKey::of(d.get("_id")?), d)))
            .collect();
        for chunk in crate::batch::chunks(ids) {
            let mut filter = crate::literal::is_in("_id", chunk.clone());
            // Routed: the key's values read with the ids.
            if !read.is_empty() {
                let docs = chunk
                    .iter()
                    .filter_map(|id| read.get(&IdKey::of(id)).copied());
                carrier.restrict(&mut filter, docs);
            }
            let write = Own::delete(&collection, filter, "delete");
            let deleted = odm.write_own(write, session.as_deref_mut()).await?;
            if i == 0 {
                root_deleted += deleted.matched;
            }
        }
    }
    for (copy, parents) in plan.latest {
        crate::denormalize::refresh_latest(odm, &copy, parents, session.as_deref_mut()).await?;
    }
    Ok((root_deleted, Resend(again)))
}
