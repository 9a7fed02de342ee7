//! `migrate status` and `migrate run`: the application's migrations against their records.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bson::{doc, Bson, Document};
use clap::Subcommand;
use futures_util::TryStreamExt;
use serde_json::json;

use super::report::{table, Report};
use crate::{Error, Odm, Result};

/// The collection recording the migrations, one document per version (see
/// [`Migrations`](crate::migrations::Migrations)).
const MIGRATIONS_COLLECTION: &str = "odm_migrations";

type Run = Arc<dyn Fn(Odm) -> Pin<Box<dyn Future<Output = Result<()>> + Send>> + Send + Sync>;

/// A migration named to the console.
pub(super) struct Step {
    version: u32,
    name: String,
    run: Run,
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Step({}, {:?})", self.version, self.name)
    }
}

impl Step {
    pub(super) fn new<F, Fut>(version: u32, name: impl Into<String>, run: F) -> Self
    where
        F: Fn(Odm) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<()>> + Send + 'static,
    {
        Step {
            version,
            name: name.into(),
            run: Arc::new(move |odm| Box::pin(run(odm))),
        }
    }
}

#[derive(Subcommand, Debug)]
pub(super) enum MigrateCommand {
    /// Each migration's state: finished, pending, failed (and why), running.
    Status {
        /// Exits 1 when a migration is not finished.
        #[arg(long)]
        check: bool,
    },
    /// Runs the pending migrations in version order, each once per database.
    Run,
}

pub(super) async fn migrate(
    odm: &Odm,
    steps: Vec<Step>,
    command: MigrateCommand,
) -> Result<Report> {
    match command {
        MigrateCommand::Status { check } => status(odm, &steps, check).await,
        MigrateCommand::Run => run(odm, steps).await,
    }
}

/// The state of one migration, from its record.
fn state_of(record: Option<&Document>) -> (String, Option<String>) {
    let Some(r) = record else {
        return ("pending".to_owned(), None);
    };
    if r.contains_key("finished") {
        return ("finished".to_owned(), None);
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
        .database()
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
    let mut migrations = odm.migrations();
    for step in steps {
        let f = step.run;
        migrations = migrations.add(step.version, step.name, move |odm| f(odm));
    }
    let report = migrations.await?;
    let mut text = String::new();
    for (v, n) in &report.applied {
        text.push_str(&format!("applied  {v} {n}\n"));
    }
    for (v, n) in &report.already {
        text.push_str(&format!("already  {v} {n}\n"));
    }
    if text.is_empty() {
        text.push_str("no migrations\n");
    }
    let pair = |(v, n): &(u32, String)| json!({ "version": v, "name": n });
    let json = json!({
        "command": "migrate run",
        "applied": report.applied.iter().map(pair).collect::<Vec<_>>(),
        "already": report.already.iter().map(pair).collect::<Vec<_>>(),
    });
    Ok(Report::new(text, json, false))
}
