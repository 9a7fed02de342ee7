//! How far behind the background cascades are.

use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;

use super::INTENTS;
use crate::{Error, Odm, Result};

/// The intents not yet applied, as [`Odm::cascade_status`] reads them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CascadeStatus {
    /// Source documents whose copies are not yet all written.
    pub pending: u64,
    /// Of those, the ones a worker holds a lease on now.
    pub claimed: u64,
    /// Of those, the ones whose last attempt failed (their `error` says why).
    pub failing: u64,
    /// When the oldest write not yet applied was recorded.
    pub oldest: Option<bson::DateTime>,
    /// How long ago that was (zero when nothing is pending): how stale a copy can be now.
    pub lag: Duration,
}

impl Odm {
    /// The background cascades not yet applied and how old the oldest is.
    ///
    /// Commands: one `aggregate` on `odm_cascades` (a `$group`). The lag is measured with this
    /// machine's clock against the time the writing machine recorded.
    pub async fn cascade_status(&self) -> Result<CascadeStatus> {
        let now = bson::DateTime::now();
        let pipeline = [doc! { "$group": {
            "_id": Bson::Null,
            "pending": { "$sum": 1 },
            "claimed": { "$sum": { "$cond": [{ "$gt": ["$lease", now] }, 1, 0] } },
            "failing": { "$sum": { "$cond": [{ "$gt": ["$error", Bson::Null] }, 1, 0] } },
            "oldest": { "$min": "$since" },
        } }];
        let coll = self.own_database().collection::<Document>(INTENTS);
        let rows: Vec<Document> = coll
            .aggregate(pipeline)
            .await
            .map_err(|e| Error::from_driver(INTENTS, e))?
            .try_collect()
            .await
            .map_err(|e| Error::from_driver(INTENTS, e))?;
        let row = rows.into_iter().next().unwrap_or_default();
        let count = |k: &str| match row.get(k) {
            Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Double(n)) => *n as u64,
            _ => 0,
        };
        let oldest = match row.get("oldest") {
            Some(Bson::DateTime(d)) => Some(*d),
            _ => None,
        };
        let lag = oldest.map_or(Duration::ZERO, |d| {
            Duration::from_millis(
                u64::try_from(now.timestamp_millis() - d.timestamp_millis()).unwrap_or(0),
            )
        });
        Ok(CascadeStatus {
            pending: count("pending"),
            claimed: count("claimed"),
            failing: count("failing"),
            oldest,
            lag,
        })
    }

    /// Waits until no background cascade is pending, checking every 50 ms, for at most
    /// `within`; [`Error::CascadeLag`] with the last status when they are still behind then.
    ///
    /// Commands: one `aggregate` per check (see [`Odm::cascade_status`]). It runs no cascade
    /// itself: a [`CascadeWorker`](super::CascadeWorker) must be running.
    pub async fn wait_for_cascades(&self, within: Duration) -> Result<()> {
        let start = std::time::Instant::now();
        loop {
            let status = self.cascade_status().await?;
            if status.pending == 0 {
                return Ok(());
            }
            if start.elapsed() >= within {
                return Err(Error::CascadeLag {
                    pending: status.pending,
                    failing: status.failing,
                    lag: status.lag,
                    waited: start.elapsed(),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
