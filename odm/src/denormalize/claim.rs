//! Sources claimed by a transaction that copies them.
//!
//! A transaction reads a snapshot, and reads never conflict: an insert copying a part in one
//! transaction and the delete of that part in another both commit, the delete never seeing the
//! new document whose summary it should pull (the insert read the part before the delete
//! committed). Only two writes of one document conflict. So a transaction that copies sources
//! first writes them: a marker field set and taken away again, which leaves each source as it
//! was (a write that changes nothing would not conflict). A concurrent delete or update of a
//! claimed source then fails one of the two transactions with a write conflict
//! (`TransientTransactionError`), to be run again, seeing the other's outcome.

use bson::{doc, Bson, Document};
use mongodb::ClientSession;

use crate::engine::{Effect, Own};
use crate::{Error, Odm, Result};

/// The field set and removed again; never left on a document.
const MARKER: &str = "__odm_claim";

/// Writes each of `ids` in `source` without changing it, inside the session's transaction: one
/// `update` with two statements (set the marker, remove it) per [chunk](crate::batch) of ids.
pub(super) async fn claim(
    odm: &Odm,
    source: &str,
    ids: &[Bson],
    session: &mut ClientSession,
) -> Result<()> {
    // Both statements repeat the ids: half the budget each.
    let chunks = crate::batch::chunks_within(
        ids.to_vec(),
        crate::batch::MAX_IDS_BYTES / 2,
        crate::batch::MAX_IDS,
    );
    for chunk in chunks {
        let filter = crate::literal::is_in("_id", chunk);
        write_claiming(odm, source, filter, Document::new(), true, session).await?;
    }
    Ok(())
}

/// `$set` of `fields` on the document `filter` names, inside the session's transaction, which
/// writes it even when the fields already hold these values. A recomputed latest-N array that
/// comes out as it was is then still a write of its parent, which a concurrent recomputation
/// of the same parent, from a snapshot without this transaction's change, conflicts with.
pub(super) async fn set_claiming(
    odm: &Odm,
    collection: &str,
    filter: Document,
    fields: Document,
    session: &mut ClientSession,
) -> Result<()> {
    write_claiming(odm, collection, filter, fields, false, session).await
}

/// One `update` with two statements on what `filter` matches (every document when `multi`):
/// `fields` set with the marker, then the marker removed.
async fn write_claiming(
    odm: &Odm,
    collection: &str,
    filter: Document,
    mut fields: Document,
    multi: bool,
    session: &mut ClientSession,
) -> Result<()> {
    fields.insert(MARKER, true);
    // Fields of the ODM's own (a marker, a recomputed array): no writer's version moves.
    let set = Own::update(
        collection,
        filter.clone(),
        doc! { "$set": fields },
        Effect::Derived,
        "claim",
    );
    let unset = doc! { "$unset": { MARKER: "" } };
    let unset = Own::update(collection, filter.clone(), unset, Effect::Derived, "claim");
    let both = match multi {
        true => vec![set, unset],
        false => vec![set.one(), unset.one()],
    };
    // A write error names the write: a conflict on it queues the ODM's next attempt behind
    // the other writers of this process that met it (see `crate::contention`).
    let shown = crate::error::show_filter(&filter);
    let written = odm.write_own_all(both, true, &shown, Some(session)).await?;
    match written.refused.first() {
        None => Ok(()),
        Some(first) => Err(Error::Unsupported(format!(
            "cannot write `{collection}` in this transaction: {}",
            first.message
        ))),
    }
}
