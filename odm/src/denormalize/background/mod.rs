//! Durable background cascades: `#[denormalize(..., cascade = "background")]`.
//!
//! An update of a copied source field does not write the copies itself. In the transaction of
//! the source write it records an *intent* in the collection [`INTENTS`], one document per
//! source document:
//!
//! ```text
//! { _id: { source: "parts", id: <the source's _id> },
//!   seq: <bumped by every write recorded>,  copies: ["products.parts", ...],
//!   since: <first write not yet applied>,    at: <last write>,
//!   claim: <worker's token>, lease: <until>, batches: <n>, error: <last failure> }
//! ```
//!
//! A [`CascadeWorker`] the application runs claims intents (oldest first), reads the source's
//! *current* values and writes them into the copies in batches, each batch in a transaction
//! that first checks the intent is still its own and unchanged. So:
//!
//! - a crash of the application between the source write and the cascade loses nothing: the
//!   intent committed with the write, and the next worker applies it;
//! - a worker killed mid-cascade is resumed by the next one once its lease expires: the batches
//!   select only the copies that still differ from the source, so the work already done is not
//!   redone and no progress pointer is needed;
//! - applying an intent twice is harmless (nothing differs the second time), and an older
//!   intent never writes an older value: the values are read from the source, not stored in
//!   the intent, and a batch commits only while the intent's `seq` is the one its values were
//!   read under (a newer write changes `seq` in its transaction, so the batch aborts or finds a
//!   different `seq`), and only while the worker's claim stands (a worker whose lease expired
//!   and was taken over writes nothing more).
//!
//! Whatever copies a copy the worker writes (a copy of a copy) follows in the batch's
//! transaction, level after level, as in a synchronous cascade (see `transitive`).
//!
//! The lag is reported by [`Odm::cascade_status`](crate::Odm::cascade_status) and by each
//! worker run ([`WorkerReport::lag`]); [`Odm::verify_copies`](crate::Odm::verify_copies)
//! remains the safety net for writes made behind the ODM's back.

mod intent;
mod record;
mod status;
mod worker;

pub(crate) use record::{
    find_and_modify_and_record, record_after_write, replace_and_record, update_and_record,
};
pub use status::CascadeStatus;
pub(in crate::denormalize) use worker::sent;
pub use worker::{CascadeWorker, WorkerReport};

use super::CopyInfo;

/// The collection holding the intents of background cascades.
pub const INTENTS: &str = "odm_cascades";

/// The name of a copy in an intent's `copies`: `dependent collection.path`.
fn name_of(copy: &CopyInfo) -> String {
    format!("{}.{}", copy.dependent, copy.path)
}

/// The statement recording the intent of the source `id` (of the collection `source`) for
/// those of `copies` cascaded in the background, at the time `now`: what an update of the
/// source sends in its transaction, and what the cascade plan shows.
pub(in crate::denormalize) fn intent_of(
    source: &str,
    copies: &[&CopyInfo],
    id: bson::Bson,
    now: bson::Bson,
) -> bson::Document {
    let names = copies
        .iter()
        .filter(|c| c.background)
        .map(|c| bson::Bson::String(name_of(c)))
        .collect();
    record::statement(source, id, names, now)
}

/// Whether any of `copies` is cascaded in the background.
pub(crate) fn any(copies: &[CopyInfo]) -> bool {
    copies.iter().any(|c| c.background)
}

/// The background copies taken from `source`, by name.
fn background_copies(catalog: &crate::catalog::Catalog, source: &str) -> Vec<CopyInfo> {
    catalog
        .copies_from(source)
        .iter()
        .filter(|c| c.background)
        .cloned()
        .collect()
}
