//! When the stored position is no longer in the server's history: the repairing sweeps of
//! what the features maintain (each feature's sweep, in the order of the list, see
//! `crate::pipeline`'s `Followers`), run once the stream is open at the present (so that
//! nothing written during the sweeps is missed).

use super::watch::Watched;
use crate::{Error, Odm, Result};

pub use crate::pipeline::following::HistoryLost;

/// Logs the loss, then runs the sweeps of the watched collections.
pub(crate) async fn repair(odm: &Odm, watched: &[Watched], lost: Error) -> Result<HistoryLost> {
    let message = match lost {
        Error::ChangeStreamHistoryLost { message } => message,
        other => other.to_string(),
    };
    tracing::warn!(target: "odm", %message, "follower: the stored position is lost; sweeping and following from the present");
    let collections: Vec<&'static str> = watched.iter().map(|w| w.collection).collect();
    crate::pipeline::following::sweep_lost(odm, &collections, message).await
}
