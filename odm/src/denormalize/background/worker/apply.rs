//! Applying one claimed intent: its batches of dependents written, each in a transaction
//! when the deployment has them.

use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::options::{FindOneOptions, FindOptions};
use mongodb::ClientSession;

use super::super::super::{CopyInfo, CopyKind};
use super::super::intent::Intent;
use super::super::INTENTS;
use crate::engine::{Effect, Own};
use crate::{Error, Odm, Result};

use super::{commit, intents, CascadeWorker, Claimed, Pass, WorkerReport};

impl CascadeWorker {
    /// One pass over a claimed intent: reads it and the source, writes every copy that
    /// differs, batch after batch, then deletes the intent.
    pub(super) async fn apply(
        &self,
        session: &mut ClientSession,
        claimed: &Claimed,
        budget: &mut usize,
        report: &mut WorkerReport,
    ) -> Result<Pass> {
        let Some(doc) = intents(&self.odm)
            .find_one(crate::literal::eq("_id", claimed.key.clone()))
            .await
            .map_err(|e| Error::from_driver(INTENTS, e))?
        else {
            return Ok(Pass::Lost);
        };
        if doc.get("claim") != Some(&Bson::ObjectId(claimed.token)) {
            return Ok(Pass::Lost);
        }
        let intent = Intent::read(self.odm.catalog(), &doc)?;
        let mut projection = super::super::super::cascade::projection(&intent.copies);
        projection.insert("_id", 1);
        let source = self
            .odm
            .own_database()
            .collection::<Document>(intent.source)
            .find_one(crate::literal::eq("_id", intent.id.clone()))
            .with_options(FindOneOptions::builder().projection(projection).build())
            .await
            .map_err(|e| Error::from_driver(intent.source, e))?;
        // A deleted source has no value to copy: its delete took care of its copies.
        if let Some(source) = source {
            for copy in intent.copies.iter().filter(|c| c.is_source(&source)) {
                let values = copy.values_of(&source)?;
                match self
                    .write_copy(session, claimed, &intent, copy, &values, budget, report)
                    .await?
                {
                    Pass::Done => {}
                    other => return Ok(other),
                }
            }
        }
        let done = Own::delete(
            INTENTS,
            claimed.filter(Some(intent.seq)),
            "background intent",
        );
        let deleted = self.odm.write_own(done.one(), None).await?;
        if deleted.matched == 0 {
            // A newer write (or another worker): read the intent again.
            return Ok(Pass::Stale);
        }
        if let Some(since) = intent.since {
            let age = bson::DateTime::now().timestamp_millis() - since.timestamp_millis();
            report.lag = report
                .lag
                .max(Duration::from_millis(u64::try_from(age).unwrap_or(0)));
        }
        Ok(Pass::Done)
    }

    /// Writes `values` into every copy `copy` of the source that differs from them, one batch
    /// of dependents per transaction.
    #[allow(clippy::too_many_arguments)]
    async fn write_copy(
        &self,
        session: &mut ClientSession,
        claimed: &Claimed,
        intent: &Intent,
        copy: &CopyInfo,
        values: &[(String, Bson)],
        budget: &mut usize,
        report: &mut WorkerReport,
    ) -> Result<Pass> {
        let target = Target::new(copy, &intent.id, values);
        // A first pass walks the source's dependents by the index on the reference alone (a
        // condition on the copy's values in the cursor costs more than every write it
        // saves); the batch's update skips the copies already equal. A resumed pass walks
        // only the copies that still differ, so that it reads and writes only what is left.
        let walk = target.walk(intent.resumed);
        // The dependents' shard key is read with their ids, for the batches' filters.
        let key = crate::catalog::KeyCarrier::of(self.odm.catalog(), copy.dependent);
        let mut projection = doc! { "_id": 1 };
        key.project(&mut projection);
        let options = FindOptions::builder()
            .projection(projection)
            .batch_size(u32::try_from(self.batch).unwrap_or(u32::MAX))
            .build();
        let coll = self
            .odm
            .own_database()
            .collection::<Document>(copy.dependent);
        let error = |e| Error::from_driver(copy.dependent, e);
        let mut cursor = coll
            .find(walk.clone())
            .with_options(options)
            .await
            .map_err(error)?;
        let mut read = Vec::with_capacity(self.batch);
        loop {
            let next = cursor.try_next().await.map_err(error)?;
            let end = next.is_none();
            if let Some(d) = next.filter(|d| d.contains_key("_id")) {
                read.push(d);
            }
            if read.len() < self.batch && !end {
                continue;
            }
            if !read.is_empty() {
                if *budget == 0 {
                    return Ok(Pass::Paused);
                }
                *budget -= 1;
                let batch = batch_filter(&key, &read);
                read.clear();
                let written = self
                    .in_transaction(session, claimed, intent, &target, &batch)
                    .await?;
                let Some(written) = written else {
                    return Ok(Pass::Stale);
                };
                report.batches += 1;
                report.written += written;
                if !self.pause.is_zero() {
                    tokio::time::sleep(self.pause).await;
                }
            }
            if end {
                return Ok(Pass::Done);
            }
        }
    }

    /// [`batch`](Self::batch) in a transaction of the worker's session, run again on
    /// transient errors (write conflicts) until [`Odm::retry_deadline`], the commit again on an
    /// unknown commit result.
    async fn in_transaction(
        &self,
        s: &mut ClientSession,
        claimed: &Claimed,
        intent: &Intent,
        target: &Target,
        batch: &Document,
    ) -> Result<Option<u64>> {
        let start = std::time::Instant::now();
        let mut attempt: u64 = 0;
        loop {
            attempt += 1;
            match self.odm.transaction_options() {
                None => s.start_transaction().await?,
                Some(options) => s.start_transaction().with_options(options).await?,
            }
            let e = match self
                .batch(&self.odm, s, claimed, intent, target, batch)
                .await
            {
                Ok(written) => match commit(s, start, self.odm.retry_deadline()).await {
                    Ok(()) => return Ok(written),
                    Err(e) => e,
                },
                Err(e) => {
                    let _ = s.abort_transaction().await;
                    e
                }
            };
            if !e.is_transient() || start.elapsed() >= self.odm.retry_deadline() {
                return Err(e);
            }
            tokio::time::sleep(Duration::from_millis(5 * attempt.min(40))).await;
        }
    }

    /// One batch in `s`: the intent still ours and at the same `seq` (lease extended), then the
    /// dependents `batch` that still differ. `None`, with nothing written, when the intent
    /// changed.
    async fn batch(
        &self,
        odm: &Odm,
        s: &mut ClientSession,
        claimed: &Claimed,
        intent: &Intent,
        target: &Target,
        batch: &Document,
    ) -> Result<Option<u64>> {
        let lease = doc! { "$set": { "lease": self.lease_end() }, "$inc": { "batches": 1_i64 } };
        let filter = claimed.filter(Some(intent.seq));
        let hold = Own::update(INTENTS, filter, lease, Effect::Derived, "background intent");
        let held = odm.write_own(hold.one(), Some(&mut *s)).await?;
        if held.matched == 0 {
            return Ok(None);
        }
        let filter = target.batch(batch);
        // Copies are derived data: no holder's version moves.
        let dependent = target.copy.dependent;
        let mut write = Own::update(
            dependent,
            filter,
            target.update.clone(),
            Effect::Derived,
            "background cascade",
        );
        if let Some(array_filters) = target.array_filters.clone() {
            write = write.array_filters(array_filters);
        }
        let result = odm.write_own(write, Some(&mut *s)).await?;
        // The copies of this copy follow in the same transaction, from the values the batch
        // wrote (one `find` of the batch and their updates per level; nothing when nothing
        // copies it): a worker's write is a cascade like any other.
        let level = super::super::super::transitive::Written {
            copy: &target.copy,
            filter: batch.clone(),
            values: vec![(target.source.clone(), target.values.clone())],
        };
        super::super::super::transitive::follow(odm, level, Some(&mut *s)).await?;
        Ok(Some(result.modified))
    }
}

/// The dependents of one source whose copy differs from its values, and the update that sets
/// them; every value is matched and written as a value (`$eq`), never read as an operator.
struct Target {
    /// The copy written (its dependent collection is the one updated), and the source's id and
    /// values, for the copies of this copy.
    copy: CopyInfo,
    source: Bson,
    values: Document,
    /// `{ <the dependents of the source>, <the copy differs> }`.
    differs: Document,
    /// The dependents of the source.
    of_source: Document,
    /// What a batch's dependents must still match: for a flat copy, still a dependent of this
    /// source whose copy differs; for an array of summaries nothing (the array filter picks
    /// this source's summaries, and one already equal is not modified).
    still: Document,
    update: Document,
    array_filters: Option<Vec<Document>>,
}

impl Target {
    fn new(copy: &CopyInfo, id: &Bson, values: &[(String, Bson)]) -> Target {
        let of_source = copy.dependents_of(std::slice::from_ref(id));
        let array = matches!(copy.kind, CopyKind::Summary { array: true, .. });
        let (update, array_filters) = match &copy.kind {
            CopyKind::Summary {
                array: true,
                id: id_field,
                ..
            } => {
                let mut set = Document::new();
                for (to, v) in values {
                    set.insert(format!("{}.$[copy].{to}", copy.path), v.clone());
                }
                (
                    doc! { "$set": set },
                    Some(vec![crate::literal::eq(
                        &format!("copy.{id_field}"),
                        id.clone(),
                    )]),
                )
            }
            _ => {
                let mut set = Document::new();
                for (to, v) in values {
                    set.insert(join(&copy.path, to), v.clone());
                }
                (doc! { "$set": set }, None)
            }
        };
        let differs = copy.differs(id, values);
        Target {
            copy: copy.clone(),
            source: id.clone(),
            values: values.iter().cloned().collect(),
            // An array's summaries are picked by the array filter on the source's id, and a
            // summary already equal is left as it is by the server (not counted as modified):
            // the batch needs no condition on the values. A flat copy must still follow this
            // source (its reference may have moved since the cursor read it).
            still: if array {
                Document::new()
            } else {
                differs.clone()
            },
            differs,
            of_source,
            update,
            array_filters,
        }
    }
}

impl Target {
    /// The dependents a pass walks: on a first pass every dependent of the source, on a
    /// resumed one only those whose copy still differs.
    fn walk(&self, resumed: bool) -> &Document {
        match resumed {
            true => &self.differs,
            false => &self.of_source,
        }
    }

    /// The filter of the update of a batch of dependents (`batch`, as [`batch_filter`] reads
    /// it).
    fn batch(&self, batch: &Document) -> Document {
        // The batch's `_id`s first and alone at the top, so that the server selects by `_id`
        // (a planner choosing the index on the source's id would scan every dependent of the
        // source for every batch).
        let mut filter = batch.clone();
        if !self.still.is_empty() {
            crate::literal::and(&mut filter, [self.still.clone().into()]);
        }
        filter
    }
}

/// What the worker sends to write one copy, as the cascade plan shows it (see [`sent`]).
pub(in crate::denormalize) struct Sent {
    /// The filter of a first pass's walk over the source's dependents.
    pub(in crate::denormalize) walk: Document,
    /// The filter of a batch's update.
    pub(in crate::denormalize) filter: Document,
    /// The batch's update.
    pub(in crate::denormalize) update: Document,
    /// Its array filters (for an array of summaries).
    pub(in crate::denormalize) array_filters: Option<Vec<Document>>,
}

/// What the worker sends to write the copy `copy` of the source `id` (whose copied values are
/// `values`): the walk of a first pass, and the update of a batch whose dependents' `_id`s are
/// `ids` and whose shard key field `f` holds `key(f)`.
pub(in crate::denormalize) fn sent(
    catalog: &crate::catalog::Catalog,
    copy: &CopyInfo,
    id: &Bson,
    values: &[(String, Bson)],
    ids: Bson,
    key: impl Fn(&str) -> Bson,
) -> Sent {
    let target = Target::new(copy, id, values);
    let carrier = crate::catalog::KeyCarrier::of(catalog, copy.dependent);
    let mut fields = Document::new();
    carrier.project(&mut fields);
    let mut read = doc! { "_id": ids };
    for field in fields.keys() {
        set_path(&mut read, field, key(field));
    }
    Sent {
        walk: target.walk(false).clone(),
        filter: target.batch(&batch_filter(&carrier, std::slice::from_ref(&read))),
        update: target.update.clone(),
        array_filters: target.array_filters.clone(),
    }
}

/// Sets the dotted `path` of `doc` to `value`, creating the documents on the way.
fn set_path(doc: &mut Document, path: &str, value: Bson) {
    match path.split_once('.') {
        None => {
            doc.insert(path, value);
        }
        Some((first, rest)) => {
            if !matches!(doc.get(first), Some(Bson::Document(_))) {
                doc.insert(first, Document::new());
            }
            if let Some(Bson::Document(inner)) = doc.get_mut(first) {
                set_path(inner, rest, value);
            }
        }
    }
}

/// `prefix.to`, or either alone when the other is empty.
fn join(prefix: &str, to: &str) -> String {
    match (prefix.is_empty(), to.is_empty()) {
        (true, _) => to.to_owned(),
        (_, true) => prefix.to_owned(),
        _ => format!("{prefix}.{to}"),
    }
}

/// The filter of a batch of dependents, as the walk read them: `{_id: {$in: ids}}` first and
/// alone at the top (see `batch`), then the condition on their shard key values (none for an
/// unsharded dependent), which routes the batch's writes.
fn batch_filter(key: &crate::catalog::KeyCarrier, read: &[Document]) -> Document {
    let ids = read.iter().filter_map(|d| d.get("_id").cloned()).collect();
    let mut filter = crate::literal::is_in("_id", ids);
    key.restrict(&mut filter, read);
    filter
}
