//! What a run would do, read beforehand ([`Migrations::plan`]), and the down step of the last
//! migration applied ([`Migrations::revert`]).

use std::time::{Duration, Instant};

use bson::oid::ObjectId;
use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;

use super::run::{Migration, Migrations, MIGRATIONS_COLLECTION};
use super::MigrationRun;
use crate::{Error, Odm, Result};

/// What [`Migrations::plan`] read: what a run would do, and what a revert would undo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MigrationPlan {
    /// The migrations a run would start, in the order it would run them, `(version, name)`:
    /// never started, failed, or left by a process whose lease has expired.
    pub to_run: Vec<(u32, String)>,
    /// Those another process is running now: a run would wait for each.
    pub running: Vec<(u32, String)>,
    /// Those already finished, in version order.
    pub finished: Vec<(u32, String)>,
    /// The migration [`Migrations::revert`] would undo (the finished one of the highest
    /// version), `(version, name)`, or none when none is finished.
    pub to_revert: Option<(u32, String)>,
    /// Why that revert would be refused, when it would: the migration declares no down step,
    /// or this program does not know it.
    pub revert_refused: Option<String>,
}

fn version_of(record: &Document) -> Option<u32> {
    match record.get("_id") {
        Some(Bson::Int32(v)) => u32::try_from(*v).ok(),
        Some(Bson::Int64(v)) => u32::try_from(*v).ok(),
        _ => None,
    }
}

/// Every record, in version order (one `find`).
async fn records(odm: &Odm) -> Result<Vec<Document>> {
    let driver = |e| Error::from_driver(MIGRATIONS_COLLECTION, e);
    odm.own_database()
        .collection::<Document>(MIGRATIONS_COLLECTION)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .map_err(driver)?
        .try_collect()
        .await
        .map_err(driver)
}

/// The migration `version` recorded under another name than the one added: refused, as a run
/// refuses it.
fn renamed(m: &Migration, record: &Document) -> Option<Error> {
    let recorded = record.get_str("name").unwrap_or_default();
    (recorded != m.name).then(|| Error::Migration {
        version: m.version,
        name: m.name.clone(),
        message: format!(
            "version {} is recorded in `{MIGRATIONS_COLLECTION}` as `{recorded}`",
            m.version
        ),
    })
}

/// The finished migration of the highest version, and the reason a revert of it is refused.
fn last_finished<'m>(
    steps: &'m [Migration],
    records: &[Document],
) -> Option<(u32, String, Result<&'m Migration, String>)> {
    let record = records
        .iter()
        .filter(|r| r.contains_key("finished"))
        .max_by_key(|r| version_of(r))?;
    let version = version_of(record)?;
    let recorded = record.get_str("name").unwrap_or_default().to_owned();
    let found = match steps.iter().find(|m| m.version == version) {
        None => Err(
            "it is not known to this program (another version of the application recorded it)"
                .to_owned(),
        ),
        Some(m) if m.down.is_none() => {
            Err("it declares no down step (give it one with `Migrations::down`)".to_owned())
        }
        Some(m) => Ok(m),
    };
    Some((version, recorded, found))
}

impl Migrations<'_> {
    /// What a run would do, without running anything: one `find` of the records. A run started
    /// now runs [`to_run`](MigrationPlan::to_run), in that order (another process may get to
    /// some first). A version recorded under another name is refused with
    /// [`Error::Migration`], as a run refuses it.
    pub async fn plan(mut self) -> Result<MigrationPlan> {
        self.ordered()?;
        let records = records(self.odm).await?;
        let mut plan = MigrationPlan::default();
        for m in &self.steps {
            let record = records.iter().find(|r| version_of(r) == Some(m.version));
            if let Some(error) = record.and_then(|r| renamed(m, r)) {
                return Err(error);
            }
            let named = (m.version, m.name.clone());
            match record {
                Some(r) if r.contains_key("finished") => plan.finished.push(named),
                Some(r)
                    if !r.contains_key("error")
                        && r.get_datetime("lease_until")
                            .is_ok_and(|l| *l > DateTime::now()) =>
                {
                    plan.running.push(named)
                }
                _ => plan.to_run.push(named),
            }
        }
        if let Some((version, name, found)) = last_finished(&self.steps, &records) {
            plan.to_revert = Some((version, name));
            plan.revert_refused = found.err();
        }
        Ok(plan)
    }

    /// Undoes the last migration applied (the finished one of the highest version) with its
    /// [`down`](Self::down) step, and deletes its record: a run applies it again. `None` when
    /// no migration is finished.
    ///
    /// Sends one `find` of the records; then one `update` claiming the revert (a lease, as a
    /// run claims a migration, so that two processes never revert it together), the down
    /// step's own commands, and one `delete` of the record. A migration that declares no down
    /// step, or that this program does not know, is refused with [`Error::Migration`] before
    /// anything is written; so is one another process is reverting. A down step that fails
    /// leaves the migration finished, with `revert_error` on its record, and returns
    /// [`Error::Migration`].
    pub async fn revert(mut self) -> Result<Option<MigrationRun>> {
        self.ordered()?;
        let records_read = records(self.odm).await?;
        let Some((version, recorded, found)) = last_finished(&self.steps, &records_read) else {
            return Ok(None);
        };
        let fail = |message: String| Error::Migration {
            version,
            name: recorded.clone(),
            message,
        };
        let m = found.map_err(|why| fail(format!("cannot be reverted: {why}")))?;
        if let Some(error) = records_read
            .iter()
            .find(|r| version_of(r) == Some(version))
            .and_then(|r| renamed(m, r))
        {
            return Err(error);
        }
        let Some(down) = m.down.clone() else {
            return Err(fail("declares no down step".to_owned()));
        };
        let records = super::Records::of(self.odm);
        let owner = ObjectId::new();
        claim_revert(&records, version, owner, self.lease)
            .await?
            .then_some(())
            .ok_or_else(|| fail("another process is reverting it".to_owned()))?;
        let started = Instant::now();
        let outcome = down(self.odm.clone()).await;
        let elapsed = started.elapsed();
        let mine = doc! { "_id": i64::from(version), "reverting": owner };
        match outcome {
            Ok(documents) => {
                if !records.delete(mine).await? {
                    return Err(fail(
                        "its lease expired while it was reverted and another process took it over"
                            .to_owned(),
                    ));
                }
                Ok(Some(MigrationRun {
                    version,
                    name: m.name.clone(),
                    elapsed,
                    documents,
                }))
            }
            Err(e) => {
                let said = e.one_line();
                let error = doc! {
                    "$set": { "revert_error": &said },
                    "$unset": { "reverting": "", "revert_lease_until": "" },
                };
                records.update(mine, error).await?;
                Err(fail(format!("its down step failed: {said}")))
            }
        }
    }
}

/// Claims the revert of the finished migration `version` for `owner` (one `update`): false
/// when another process holds an unexpired claim, or the record is gone or not finished.
async fn claim_revert(
    records: &super::Records<'_>,
    version: u32,
    owner: ObjectId,
    lease: Duration,
) -> Result<bool> {
    let now = DateTime::now();
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let until = DateTime::from_millis(now.timestamp_millis().saturating_add(lease_ms));
    let filter = doc! {
        "_id": i64::from(version),
        "finished": { "$exists": true },
        "$or": [
            { "reverting": { "$exists": false } },
            { "revert_lease_until": { "$lte": now } },
        ],
    };
    let claim = doc! {
        "$set": { "reverting": owner, "revert_lease_until": until },
        "$unset": { "revert_error": "" },
    };
    Ok(records.update(filter, claim).await?.matched == 1)
}
