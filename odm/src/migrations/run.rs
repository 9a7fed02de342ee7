//! Ordered, recorded, once-only migrations, safe with several processes starting at once.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bson::oid::ObjectId;
use bson::{doc, DateTime};

use super::{Changed, MigrationRun};
use crate::{Error, Odm, Result};

/// The collection recording the migrations: one document per version.
pub const MIGRATIONS_COLLECTION: &str = "odm_migrations";

/// A step of a migration (its `up` or its `down`), its outcome as a count of documents.
pub(super) type Step =
    Arc<dyn Fn(Odm) -> Pin<Box<dyn Future<Output = Result<Option<u64>>> + Send>> + Send + Sync>;

/// `run` as a [`Step`].
fn step<F, Fut, O>(run: F) -> Step
where
    F: Fn(Odm) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O>> + Send + 'static,
    O: Changed,
{
    let run = Arc::new(run);
    Arc::new(move |odm| {
        let fut = run(odm);
        Box::pin(async move { fut.await.map(|o| o.documents()) })
    })
}

/// One migration: its version, its name, what it does and, when it declares one, how it is
/// undone.
pub(super) struct Migration {
    pub(super) version: u32,
    pub(super) name: String,
    pub(super) up: Step,
    pub(super) down: Option<Step>,
}

/// Migrations on the handle.
impl Odm {
    /// A set of migrations to run, in version order, each at most once per database; add them
    /// with [`Migrations::add`] and `.await` it (at start-up, or from a command of the
    /// application's). See [`Migrations`] for what it records and sends.
    pub fn migrations(&self) -> Migrations<'_> {
        Migrations {
            odm: self,
            steps: Vec::new(),
            lease: Duration::from_secs(600),
            poll: Duration::from_millis(100),
            misuse: None,
        }
    }
}

/// Builder returned by [`Odm::migrations`]; `.await` it.
///
/// Each migration has a version (its order) and a name. They are recorded in the collection
/// `odm_migrations`, one document per version: `{_id: version, name, owner, started,
/// lease_until, attempts, finished}` (`finished` once it succeeded, `error` when it failed).
/// For each migration, in version order:
///
/// - one `insert` of its record claims it; the process whose insert succeeds runs it, and one
///   `update` (filtered on its `owner`) sets `finished`;
/// - when the record exists (duplicate key): one `find` reads it. A finished migration is
///   skipped; one whose lease has expired (its process died, or it failed) is taken over with
///   one `update` filtered on the lease read, so that one process only takes it, and run
///   again: migrations are *resumable*, so each must be idempotent (re-running a half-done
///   step must finish it, not do it twice); one that another process is running is waited for,
///   reading it again every poll interval (100 ms), until it is finished or its lease expires.
///
/// So two processes starting together run each migration exactly once between them, and
/// neither goes past a migration before it is finished. A migration that fails releases its
/// lease, records `error`, and stops the run with [`Error::Migration`]: the next run starts
/// it again. A migration that runs longer than the lease (default 10 minutes) may be started
/// by another process: give [`lease`](Self::lease) more than the longest step. A recorded
/// version whose name is not the one added is refused with [`Error::Migration`] before
/// anything runs past it.
///
/// A step returns `()` or what it changed ([`Changed`]: a count, the driver's `UpdateResult`);
/// the [report](MigrationReport::runs) gives each migration run with its time and that count,
/// which its record keeps too (`documents`). [`plan`](Self::plan) says beforehand what a run
/// would start, in order, reading the records only; [`down`](Self::down) gives a migration the
/// step that undoes it, and [`revert`](Self::revert) runs the down step of the last migration
/// applied and deletes its record (a migration without one is refused).
///
/// ```no_run
/// # async fn run(odm: odm::Odm) -> odm::Result<()> {
/// use odm::bson::{doc, Document};
/// let migrations = || {
///     odm.migrations()
///         .add(1, "list everyone", |odm: odm::Odm| async move {
///             let people = odm.database().collection::<Document>("people");
///             Ok(people.update_many(doc! {}, doc! { "$set": { "listed": true } }).await?)
///         })
///         .down(|odm: odm::Odm| async move {
///             let people = odm.database().collection::<Document>("people");
///             Ok(people.update_many(doc! {}, doc! { "$unset": { "listed": "" } }).await?)
///         })
/// };
/// println!("would run {:?}", migrations().plan().await?.to_run);
/// for run in migrations().await?.runs {
///     println!("{} {}: {:?}, {:?} documents", run.version, run.name, run.elapsed, run.documents);
/// }
/// migrations().revert().await?; // `listed` is gone again
/// # Ok(()) }
/// ```
#[must_use = "the migrations run when awaited"]
pub struct Migrations<'a> {
    pub(super) odm: &'a Odm,
    pub(super) steps: Vec<Migration>,
    pub(super) lease: Duration,
    pub(super) poll: Duration,
    /// A call made out of order (`down` before any `add`), refused when awaited.
    misuse: Option<&'static str>,
}

impl std::fmt::Debug for Migrations<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let steps: Vec<(u32, &str, bool)> = self
            .steps
            .iter()
            .map(|m| (m.version, m.name.as_str(), m.down.is_some()))
            .collect();
        f.debug_struct("Migrations")
            .field("steps", &steps)
            .field("lease", &self.lease)
            .finish()
    }
}

/// What a run of [`Migrations`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MigrationReport {
    /// The migrations this process ran, `(version, name)`, in order.
    pub applied: Vec<(u32, String)>,
    /// Those already finished (by an earlier run or another process), `(version, name)`.
    pub already: Vec<(u32, String)>,
    /// The migrations this process ran, in order, each with its time and the documents it
    /// changed.
    pub runs: Vec<MigrationRun>,
}

impl<'a> Migrations<'a> {
    /// Adds the migration `version` named `name`; `run` receives a clone of the handle. It
    /// returns `()`, or what it changed (a count, the driver's `UpdateResult`, ...: see
    /// [`Changed`]), which the report shows with its time.
    pub fn add<F, Fut, O>(mut self, version: u32, name: impl Into<String>, run: F) -> Self
    where
        F: Fn(Odm) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O>> + Send + 'static,
        O: Changed,
    {
        self.steps.push(Migration {
            version,
            name: name.into(),
            up: step(run),
            down: None,
        });
        self
    }

    /// Gives the migration added last a down step, which [`revert`](Self::revert) runs to undo
    /// it. Like the migration itself it must be idempotent: a revert interrupted half-way is
    /// run again from the start. A `down` before any `add` is refused with
    /// [`Error::Unsupported`] when the migrations are awaited, planned or reverted.
    pub fn down<F, Fut, O>(mut self, run: F) -> Self
    where
        F: Fn(Odm) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O>> + Send + 'static,
        O: Changed,
    {
        match self.steps.last_mut() {
            Some(last) => last.down = Some(step(run)),
            None => self.misuse = Some("`Migrations::down` must follow the `add` it undoes"),
        }
        self
    }

    /// The migrations in version order, once each, or why they cannot run.
    pub(super) fn ordered(&mut self) -> Result<()> {
        if let Some(misuse) = self.misuse {
            return Err(Error::Unsupported(misuse.to_owned()));
        }
        self.steps.sort_by_key(|m| m.version);
        if let Some(w) = self.steps.windows(2).find(|w| w[0].version == w[1].version) {
            return Err(Error::Migration {
                version: w[0].version,
                name: w[1].name.clone(),
                message: format!(
                    "version {} is added twice (`{}` and `{}`)",
                    w[0].version, w[0].name, w[1].name
                ),
            });
        }
        Ok(())
    }

    /// How long a claim holds before another process may take the migration over (default 10
    /// minutes).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// How often a process waiting for another's migration reads its record (default 100 ms).
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll = every;
        self
    }

    async fn run(mut self) -> Result<MigrationReport> {
        self.ordered()?;
        let records = super::Records::of(self.odm);
        let owner = ObjectId::new();
        let mut report = MigrationReport::default();
        let mut progress = self.odm.track(
            crate::progress::Task::Migrate,
            crate::progress::Unit::Migrations,
            || "migrations".to_owned(),
            Some(self.steps.len() as u64),
        );
        for Migration {
            version, name, up, ..
        } in std::mem::take(&mut self.steps)
        {
            let mut step_progress = self.odm.track(
                crate::progress::Task::Migrate,
                crate::progress::Unit::Migrations,
                || format!("migration {version} {name}"),
                Some(1),
            );
            let claimed = claim(&records, version, &name, owner, self.lease, self.poll).await?;
            if !claimed {
                report.already.push((version, name));
                step_progress.finish();
                progress.advance(1);
                continue;
            }
            let started = Instant::now();
            let outcome = up(self.odm.clone()).await;
            let run = self
                .settle(&records, owner, version, &name, outcome)
                .await?;
            report.runs.push(MigrationRun {
                elapsed: started.elapsed(),
                ..run
            });
            report.applied.push((version, name));
            step_progress.advance(1);
            step_progress.finish();
            progress.advance(1);
        }
        progress.finish();
        Ok(report)
    }

    /// Records the outcome of the migration `version` that `owner` ran: `finished` (one
    /// `update` filtered on its owner), or its error with its lease released (one `update`),
    /// which stops the run.
    async fn settle(
        &self,
        records: &super::Records<'_>,
        owner: ObjectId,
        version: u32,
        name: &str,
        outcome: Result<Option<u64>>,
    ) -> Result<MigrationRun> {
        let fail = |message: String| Error::Migration {
            version,
            name: name.to_owned(),
            message,
        };
        let mine = doc! { "_id": i64::from(version), "owner": owner };
        match outcome {
            Ok(documents) => {
                let mut set = doc! { "finished": DateTime::now() };
                if let Some(n) = documents {
                    set.insert("documents", i64::try_from(n).unwrap_or(i64::MAX));
                }
                let done = records.update(mine, doc! { "$set": set }).await?;
                if done.matched != 1 {
                    return Err(fail(
                        "its lease expired while it ran and another process took it over"
                            .to_owned(),
                    ));
                }
                Ok(MigrationRun {
                    version,
                    name: name.to_owned(),
                    elapsed: Duration::ZERO,
                    documents,
                })
            }
            Err(e) => {
                let said = e.one_line();
                let error = doc! { "$set": { "lease_until": DateTime::now(), "error": &said } };
                records.update(mine, error).await?;
                Err(fail(said))
            }
        }
    }
}

impl<'a> IntoFuture for Migrations<'a> {
    type Output = Result<MigrationReport>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// Claims the migration `version` for `owner` (a lease of `lease`), or learns that it is done
/// (`false`); waits `poll` between looks while another process holds an unexpired lease.
pub(super) async fn claim(
    records: &super::Records<'_>,
    version: u32,
    name: &str,
    owner: ObjectId,
    lease: std::time::Duration,
    poll: std::time::Duration,
) -> Result<bool> {
    let fail = |message: String| Error::Migration {
        version,
        name: name.to_owned(),
        message,
    };
    let driver = |e: mongodb::error::Error| Error::from_driver(MIGRATIONS_COLLECTION, e);
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let until =
        || DateTime::from_millis(DateTime::now().timestamp_millis().saturating_add(lease_ms));
    loop {
        let claim = records
            .insert(doc! {
                "_id": i64::from(version),
                "name": name,
                "owner": owner,
                "started": DateTime::now(),
                "lease_until": until(),
                "attempts": 1,
            })
            .await;
        match claim {
            Ok(_) => return Ok(true),
            Err(e) if e.is_duplicate_key() => {}
            Err(e) => return Err(e),
        }
        let Some(record) = records
            .read
            .find_one(doc! { "_id": i64::from(version) })
            .await
            .map_err(driver)?
        else {
            continue; // deleted in between: claim again
        };
        let recorded = record.get_str("name").unwrap_or_default();
        if recorded != name {
            return Err(fail(format!(
                "version {version} is recorded in `{MIGRATIONS_COLLECTION}` as `{recorded}`"
            )));
        }
        if record.contains_key("finished") {
            return Ok(false);
        }
        let lease = record.get_datetime("lease_until").ok().copied();
        if lease.is_none_or(|l| l <= DateTime::now()) {
            let mut filter = doc! { "_id": i64::from(version), "finished": { "$exists": false } };
            if let Some(l) = lease {
                filter.insert("lease_until", l);
            }
            let resume = doc! {
                "$set": { "owner": owner, "lease_until": until(), "resumed": DateTime::now() },
                "$inc": { "attempts": 1 },
                "$unset": { "error": "" },
            };
            let taken = records.update(filter, resume).await?;
            if taken.modified == 1 {
                return Ok(true);
            }
            continue;
        }
        tokio::time::sleep(poll).await;
    }
}
