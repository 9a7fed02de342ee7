//! A batch of events turned into maintenance: each event is offered to the features that
//! follow other programs' writes (`crate::pipeline`'s `Followers`), which note what it means
//! for them; then, collection by collection, the documents noted as deleted are checked to be
//! still gone, and each feature applies what it noted, reading the present state so that an
//! event applied twice, or one whose effect an ODM write already made, changes nothing.

use std::collections::BTreeMap;

use bson::Document;
use tracing::Instrument;

use super::watch::Watched;
use super::FollowerReport;
use crate::engine::{Absent, Applied, Event, Ids, Op};
use crate::pipeline::following::{FollowList, Followers};
use crate::{Odm, Result};

/// What the events of one collection call for: each follower's notes, and the documents any of
/// them noted as deleted.
#[derive(Default)]
struct Pending {
    noted: <Followers as FollowList>::Noted,
    deleted: Ids,
}

impl Pending {
    /// Of the documents noted as deleted, those absent now. A delete event says what was true
    /// when it was written: a document another program deleted, then inserted again (in this
    /// batch, between two batches, or before a replay of the events), is there now, and the
    /// effects of its delete (its rules, its subset details, its subtree) must not be applied
    /// to it. One `find` of `_id: {$in: ids}` per [chunk](crate::batch) of the collection's
    /// deleted ids, none when there are none.
    async fn absent(&self, odm: &Odm, collection: &str) -> Result<Absent> {
        if self.deleted.list.is_empty() {
            return Ok(Absent::default());
        }
        let missing = crate::engine::missing_in(odm, collection, self.deleted.list.clone()).await?;
        Ok(Absent(
            missing.iter().map(crate::document::IdKey::of).collect(),
        ))
    }
}

/// The maintenance a batch of events calls for, by collection.
pub(crate) struct Batch {
    pending: BTreeMap<&'static str, Pending>,
    /// What the followers note of the whole batch.
    whole: <Followers as FollowList>::Batch,
    /// How long a side of a subset pair found alone is given to be joined by the other.
    settle: std::time::Duration,
}

/// The changed fields of an update event: its updated and removed fields' names.
fn changed(event: &Document) -> Vec<String> {
    let Ok(desc) = event.get_document("updateDescription") else {
        return Vec::new();
    };
    let mut paths: Vec<String> = desc
        .get_document("updatedFields")
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default();
    if let Ok(removed) = desc.get_array("removedFields") {
        paths.extend(removed.iter().filter_map(|b| b.as_str().map(str::to_owned)));
    }
    paths
}

impl Batch {
    /// A batch whose subset sides found alone are looked at again after `settle`.
    pub(crate) fn new(settle: std::time::Duration) -> Self {
        Batch {
            pending: BTreeMap::new(),
            whole: Default::default(),
            settle,
        }
    }

    /// Notes what `event` (on the watched collection `w`) calls for; `false` when nothing.
    pub(crate) fn note(&mut self, odm: &Odm, w: &Watched, event: &Document) -> bool {
        let op = match event.get_str("operationType").unwrap_or_default() {
            "insert" => Op::Insert,
            "update" => Op::Update,
            "replace" => Op::Replace,
            "delete" => Op::Delete,
            _ => return false,
        };
        let Ok(key) = event.get_document("documentKey") else {
            return false;
        };
        let Some(id) = key.get("_id") else {
            return false;
        };
        let paths = (op == Op::Update).then(|| changed(event));
        let event = Event {
            op,
            id,
            key,
            paths: paths.as_deref(),
        };
        let p = self.pending.entry(w.collection).or_default();
        let (any, deleted) =
            Followers::note(odm, w.collection, &event, &mut p.noted, &mut self.whole);
        if deleted {
            p.deleted.add(id);
        }
        any
    }

    /// Applies what was noted, collection by collection, in the order of the followers; then
    /// what spans collections (the subset pairs written alone). Counts what it did into
    /// `report`.
    pub(crate) async fn apply(self, odm: &Odm, report: &mut FollowerReport) -> Result<()> {
        let mut out = Applied::default();
        let done = self.apply_into(odm, &mut out).await;
        // What was applied counts, even when a later effect failed.
        report.add(out);
        done
    }

    async fn apply_into(self, odm: &Odm, out: &mut Applied) -> Result<()> {
        for (collection, p) in self.pending {
            let absent = p.absent(odm, collection).await?;
            let span = tracing::debug_span!(target: "odm", "follow", collection);
            Followers::apply(odm, collection, p.noted, &absent, out)
                .instrument(span)
                .await?;
        }
        Followers::finish(odm, self.whole, self.settle, out).await
    }
}
