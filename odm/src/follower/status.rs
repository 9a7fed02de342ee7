//! How far behind the follower is, read from the server: the events after its stored position.

use std::time::{Duration, Instant};

use bson::oid::ObjectId;

use super::{state, watch};
use crate::{Error, Odm, Result};

/// How many events after the stored position [`Odm::follower_status`] counts at most.
pub const COUNTED: u64 = 100_000;

/// Where the follower stands (see [`Odm::follower_status`]).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct FollowerStatus {
    /// Whether a follower has ever stored a position.
    pub started: bool,
    /// Events after the stored position: written by others, not yet applied (counted up to
    /// [`COUNTED`]).
    pub behind: u64,
    /// The wall time of the oldest event not applied.
    pub oldest: Option<bson::DateTime>,
    /// The wall time of the last event applied.
    pub through: Option<bson::DateTime>,
    /// Events applied so far, by every follower.
    pub applied: u64,
    /// The follower holding the lease, and until when, on the server's clock (an expired
    /// lease is free).
    pub holder: Option<(ObjectId, bson::DateTime)>,
}

impl Odm {
    /// Where the follower of other programs' writes stands: events not yet applied, the age of
    /// the oldest, the lease.
    ///
    /// Commands: one `find` of the follower's document, then a change stream opened at its
    /// position (`aggregate`) and read to its end (`getMore`s of up to 1,000 events, until one
    /// finds none and the position stays, waiting 10 ms), then `killCursors`.
    pub async fn follower_status(&self) -> Result<FollowerStatus> {
        let stored = state::load(self).await?;
        let mut status = FollowerStatus {
            started: stored.token.is_some(),
            through: stored.through,
            applied: stored.events,
            holder: stored.owner.zip(stored.lease),
            ..FollowerStatus::default()
        };
        let watched = watch::watched(self.catalog());
        let Some(token) = stored.token else {
            return Ok(status);
        };
        if watched.is_empty() {
            return Ok(status);
        }
        let wait = Duration::from_millis(10);
        let mut stream = watch::open(self, &watched, Some(token), 1_000, wait).await?;
        let mut fresh = true;
        let mut at = super::position(&stream);
        while status.behind < COUNTED {
            let next = stream
                .next_if_any()
                .await
                .map_err(|e| watch::refusal(self, e))?;
            match next {
                Some(event) => {
                    fresh = false;
                    status.behind += 1;
                    if status.oldest.is_none() {
                        status.oldest = event.get_datetime("wallTime").ok().copied();
                    }
                }
                None if std::mem::take(&mut fresh) => {}
                // No event in this read, but the server looked further on: read again.
                None => {
                    let now = super::position(&stream);
                    if now == at {
                        break;
                    }
                    at = now;
                }
            }
        }
        Ok(status)
    }

    /// Waits until the follower has applied every event written before the call, checking
    /// [`follower_status`](Odm::follower_status) every 50 ms; [`Error::FollowerLag`] when it
    /// is still behind after `within` (or has never run). It applies nothing itself: a
    /// [`Follower`](super::Follower) must be running.
    pub async fn wait_for_follower(&self, within: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            let status = self.follower_status().await?;
            if status.started && status.behind == 0 {
                return Ok(());
            }
            if start.elapsed() >= within {
                let now = bson::DateTime::now().timestamp_millis();
                return Err(Error::FollowerLag {
                    behind: status.behind,
                    oldest: status.oldest.map(|t| {
                        Duration::from_millis(
                            u64::try_from(now - t.timestamp_millis()).unwrap_or(0),
                        )
                    }),
                    waited: start.elapsed(),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
