//! `migrate status`, `migrate run [--dry-run]` and `migrate revert [--dry-run]`: the
//! application's migrations against their records.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bson::{doc, Bson, Document};
use clap::Subcommand;
use futures_util::TryStreamExt;
use serde_json::{json, Value};

use super::report::{table, Report};
use crate::migrations::{Changed, MigrationPlan, MigrationRun, Migrations};
use crate::{Error, Odm, Result};

/// The collection recording the migrations, one document per version (see
/// [`Migrations`](crate::migrations::Migrations)).
const MIGRATIONS_COLLECTION: &str = "odm_migrations";

type Run =
    Arc<dyn Fn(Odm) -> Pin<Box<dyn Future<Output = Result<Option<u64>>> + Send>> + Send + Sync>;

/// `run` as a [`Run`].
pub(super) fn erased<F, Fut, O>(run: F) -> Run
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

/// A migration named to the console.
pub(super) struct Step {
    version: u32,
    name: String,
    up: Run,
    pub(super) down: Option<Run>,
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Step({}, {:?})", self.version, self.name)
    }
}

impl Step {
    pub(super) fn new(version: u32, name: impl Into<String>, up: Run) -> Self {
        Step {
            version,
            name: name.into(),
            up,
            down: None,
        }
    }
}

/// The console's migrations as the library's.
fn migrations(odm: &Odm, steps: Vec<Step>) -> Migrations<'_> {
    let mut migrations = odm.migrations();
    for step in steps {
        let up = step.up;
        migrations = migrations.add(step.version, step.name, move |odm| up(odm));
        if let Some(down) = step.down {
            migrations = migrations.down(move |odm| down(odm));
        }
    }
    migrations
}

#[derive(Subcommand, Debug)]
pub(super) enum MigrateCommand {
    /// Each migration's state: finished, pending, failed (and why), running.
    Status {
        /// Exits 1 when a migration is not finished.
        #[arg(long)]
        check: bool,
    },
    /// Runs the pending migrations in version order, each once per database; a line per
    /// migration with its time and the documents it changed.
    Run {
        /// Only reads the records and lists the migrations a run would start, in order; runs
        /// nothing. Exits 1 when some would run.
        #[arg(long)]
        dry_run: bool,
    },
    /// Undoes the last migration applied with its down step, and forgets its record (a run
    /// applies it again); refused for a migration that declares no down step.
    Revert {
        /// Only says which migration would be reverted, or why it would be refused; runs
        /// nothing. Exits 1 when one would be reverted.
        #[arg(long)]
        dry_run: bool,
    },
}

pub(super) async fn migrate(
    odm: &Odm,
    steps: Vec<Step>,
    command: MigrateCommand,
) -> Result<Report> {
    match command {
        MigrateCommand::Status { check } => status(odm, &steps, check).await,
        MigrateCommand::Run { dry_run: false } => run(odm, steps).await,
        MigrateCommand::Run { dry_run: true } => {
            let plan = migrations(odm, steps).plan().await?;
            Ok(run_plan(&plan))
        }
        MigrateCommand::Revert { dry_run: false } => {
            let reverted = migrations(odm, steps).revert().await?;
            Ok(reverted_report(reverted.as_ref()))
        }
        MigrateCommand::Revert { dry_run: true } => {
            let plan = migrations(odm, steps).plan().await?;
            revert_plan(&plan)
        }
    }
}

/// The state of one migration, from its record.
fn state_of(record: Option<&Document>) -> (String, Option<String>) {
    let Some(r) = record else {
        return ("pending".to_owned(), None);
    };
    if r.contains_key("finished") {
        if r.contains_key("reverting") {
            return ("finished (being reverted)".to_owned(), None);
        }
        let revert_error = r.get_str("revert_error").ok().map(str::to_owned);
        return (
            "finished".to_owned(),
            revert_error.map(|e| format!("revert failed: {e}")),
        );
    }
    if let Ok(error) = r.get_str("error") {
        return ("failed".to_owned(), Some(error.to_owned()));
    }
    let running = r
        .get_datetime("lease_until")
        .is_ok_and(|l| *l > bson::DateTime::now());
    let state = if running { "running" } else { "interrupted" };
    (state.to_owned(), None)
}

fn version_of(record: &Document) -> Option<u32> {
    match record.get("_id") {
        Some(Bson::Int32(v)) => u32::try_from(*v).ok(),
        Some(Bson::Int64(v)) => u32::try_from(*v).ok(),
        _ => None,
    }
}

async fn status(odm: &Odm, steps: &[Step], check: bool) -> Result<Report> {
    let records: Vec<Document> = odm
        .own_database()
        .collection::<Document>(MIGRATIONS_COLLECTION)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .map_err(|e| Error::from_driver(MIGRATIONS_COLLECTION, e))?
        .try_collect()
        .await
        .map_err(|e| Error::from_driver(MIGRATIONS_COLLECTION, e))?;
    let mut rows: Vec<(u32, String, String, Option<String>)> = Vec::new();
    for step in steps {
        let record = records.iter().find(|r| version_of(r) == Some(step.version));
        let (state, error) = state_of(record);
        rows.push((step.version, step.name.clone(), state, error));
    }
    // Recorded by another version of the application: shown, not counted as pending.
    for r in &records {
        let Some(version) = version_of(r) else {
            continue;
        };
        if !steps.iter().any(|s| s.version == version) {
            let (state, error) = state_of(Some(r));
            let name = r.get_str("name").unwrap_or_default().to_owned();
            rows.push((
                version,
                name,
                format!("{state} (not known to this program)"),
                error,
            ));
        }
    }
    rows.sort_by_key(|r| r.0);
    let pending = rows
        .iter()
        .filter(|r| !r.2.starts_with("finished") && !r.2.ends_with("program)"))
        .count();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(v, n, s, e)| {
            let state = e
                .as_ref()
                .map_or_else(|| s.clone(), |e| format!("{s}: {e}"));
            vec![v.to_string(), n.clone(), state]
        })
        .collect();
    let mut text = table(&["version", "name", "state"], &cells);
    text.push_str(&format!("{pending} not finished\n"));
    let json = json!({
        "command": "migrate status",
        "pending": pending,
        "migrations": rows.iter().map(|(v, n, s, e)| json!({
            "version": v, "name": n, "state": s, "error": e,
        })).collect::<Vec<_>>(),
    });
    Ok(Report::new(text, json, check && pending > 0))
}

async fn run(odm: &Odm, steps: Vec<Step>) -> Result<Report> {
    let report = migrations(odm, steps).await?;
    let mut lines: Vec<(u32, String)> = report
        .runs
        .iter()
        .map(|r| (r.version, format!("applied   {}\n", run_line(r))))
        .chain(
            report
                .already
                .iter()
                .map(|(v, n)| (*v, format!("already   {v} {n}\n"))),
        )
        .collect();
    lines.sort_by_key(|(v, _)| *v);
    let mut text: String = lines.into_iter().map(|(_, line)| line).collect();
    if text.is_empty() {
        text.push_str("no migrations\n");
    }
    let json = json!({
        "command": "migrate run",
        "dry_run": false,
        "applied": report.runs.iter().map(run_json).collect::<Vec<_>>(),
        "already": report.already.iter().map(pair).collect::<Vec<_>>(),
    });
    Ok(Report::new(text, json, false))
}

fn pair((v, n): &(u32, String)) -> Value {
    json!({ "version": v, "name": n })
}

/// `2 split names  (12 ms, 340 documents)`.
fn run_line(r: &MigrationRun) -> String {
    let documents = match r.documents {
        Some(1) => ", 1 document".to_owned(),
        Some(n) => format!(", {n} documents"),
        None => String::new(),
    };
    let ms = r.elapsed.as_secs_f64() * 1000.0;
    format!("{} {}  ({ms:.0} ms{documents})", r.version, r.name)
}

fn run_json(r: &MigrationRun) -> Value {
    json!({
        "version": r.version,
        "name": r.name,
        "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
        "documents": r.documents,
    })
}

/// `migrate run --dry-run`: what a run would start, in order.
fn run_plan(plan: &MigrationPlan) -> Report {
    let mut text = String::new();
    for (v, n) in &plan.to_run {
        text.push_str(&format!("would run  {v} {n}\n"));
    }
    for (v, n) in &plan.running {
        text.push_str(&format!(
            "waits for  {v} {n} (another process is running it)\n"
        ));
    }
    text.push_str(&format!(
        "{} would run, {} finished (dry run: nothing was run)\n",
        plan.to_run.len(),
        plan.finished.len()
    ));
    let json = json!({
        "command": "migrate run",
        "dry_run": true,
        "to_run": plan.to_run.iter().map(pair).collect::<Vec<_>>(),
        "running": plan.running.iter().map(pair).collect::<Vec<_>>(),
        "finished": plan.finished.iter().map(pair).collect::<Vec<_>>(),
    });
    Report::new(text, json, !plan.to_run.is_empty())
}

/// `migrate revert`: what was undone.
fn reverted_report(reverted: Option<&MigrationRun>) -> Report {
    let text = match reverted {
        Some(r) => format!("reverted  {}\n", run_line(r)),
        None => "no migration is finished: nothing to revert\n".to_owned(),
    };
    let json = json!({
        "command": "migrate revert",
        "dry_run": false,
        "reverted": reverted.map(run_json),
    });
    Report::new(text, json, false)
}

/// `migrate revert --dry-run`: what would be undone; a revert that would be refused fails as
/// the revert itself would.
fn revert_plan(plan: &MigrationPlan) -> Result<Report> {
    let Some((version, name)) = &plan.to_revert else {
        let json = json!({ "command": "migrate revert", "dry_run": true, "to_revert": null });
        let text = "no migration is finished: nothing to revert (dry run)\n".to_owned();
        return Ok(Report::new(text, json, false));
    };
    if let Some(why) = &plan.revert_refused {
        return Err(Error::Migration {
            version: *version,
            name: name.clone(),
            message: format!("cannot be reverted: {why}"),
        });
    }
    let text = format!("would revert  {version} {name} (dry run: nothing was run)\n");
    let json = json!({
        "command": "migrate revert",
        "dry_run": true,
        "to_revert": pair(&(*version, name.clone())),
    });
    Ok(Report::new(text, json, true))
}
