//! The operations console: a command line over the application's own models, for the people
//! who run it (behind the `console` feature).
//!
//! The application adds a small binary that connects as it always does and hands its handle
//! over:
//!
//! ```no_run
//! # async fn main_of_the_binary() -> std::process::ExitCode {
//! let odm = odm::Odm::connect("mongodb://127.0.0.1:27017", "shop").await.unwrap();
//! odm::console::run(odm).await
//! # }
//! ```
//!
//! Every subcommand works on the models of the handle's [catalog](crate::Catalog) and takes
//! `--help`:
//!
//! | subcommand | what it does |
//! |---|---|
//! | `sync [--dry-run]` | indexes, validators and sharding as [`Odm::sync_indexes`] and [`Odm::sync_validators`] do them; `--dry-run` only reads and says what would change |
//! | `verify`, `repair` | the sweeps: copies, latest-N arrays and two-way references ([`Odm::verify_copies`]), trees, the subset pairs named with [`Console::subset`] |
//! | `migrate status`, `migrate run [--dry-run]`, `migrate revert [--dry-run]` | the migrations named with [`Console::migration`] against their records; a run (or what it would run, in order) with each migration's time and documents changed; the down step ([`Console::down`]) of the last one applied |
//! | `cascades status`, `cascades run` | background cascades ([`Odm::cascade_status`], a [`CascadeWorker`](crate::denormalize::CascadeWorker) run until idle) |
//! | `follow status`, `follow run` | the follower of other programs' writes ([`Odm::follower_status`], [`Follower::run_until_idle`](crate::follower::Follower::run_until_idle)) |
//! | `plan`, `routing` | cascade plans and routing reports of the models named with [`Console::model`] |
//! | `diagram` | the catalog as a Mermaid class diagram ([`Odm::diagram`]) |
//! | `explain [MODEL...]` | the index use of every query shape odm generates for the models, asked of the live database ([`Odm::explain_shapes`]); a collection scan is a problem |
//!
//! With `--json` (before or after the subcommand) a command prints one JSON document on
//! stdout instead of text, an error included (`{"error": "...", "kind": "unreachable"}`; the
//! kinds are `usage`, `unreachable`, `connection`, `refused`, `migration`, `data`, `other`).
//! An error is one line, on stderr as well: what the server said, never the driver's dump of
//! its reply. A stdout closed early (`| head -1`) ends the output quietly, with the command's
//! exit code.
//!
//! `--db NAME` works on another database through the handed handle's client; `--uri URI`
//! connects a new client (on `--db`, else the URI's database, else the handle's), keeping the
//! handle's catalog and settings; `--connect-timeout SECONDS` bounds the wait for a server: the
//! new client's timeouts with `--uri`, else one `ping` first, given that long.
//!
//! Long work (sweeps, syncs, migrations, the workers, cascades) shows its
//! [progress](crate::progress) on stderr: bars with rate and time left when stderr is a
//! terminal, else a line per piece of work at its start and end and at most once a second in
//! between (`progress: verify copies products.parts.name: 40000/200000 documents, 9100/s,
//! about 17s left`). `--progress bars|lines|none` chooses. An observer the application set on
//! its handle with [`Odm::with_progress`] still hears every report.
//!
//! The exit code says how it went: [`SUCCESS`] (0) when all is well, [`PROBLEMS`] (1) when the
//! command ran and found something to act on (a copy that differs from its source, a dry run
//! that would change something, a sync that left a differing index, pending migrations with
//! `migrate status --check`, a cascade that failed, a query shape answered by a collection
//! scan), [`FAILED`] (2) when it could not run (an
//! unreachable server, a refused command, a wrong argument).

mod connect;
mod dry_run;
mod errors;
mod explain;
mod migrate;
mod plan;
mod progress;
mod report;
mod sync;
mod verify;
mod workers;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::{Odm, Result};
use report::Report;

/// The exit code of a command that ran and found nothing to act on.
pub const SUCCESS: u8 = 0;
/// The exit code of a command that ran and found something to act on.
pub const PROBLEMS: u8 = 1;
/// The exit code of a command that could not run.
pub const FAILED: u8 = 2;

/// Runs the console with the process's arguments over the models of `odm`'s catalog, and
/// returns the exit code (it never exits itself): `main` returns it.
pub async fn run(odm: Odm) -> ExitCode {
    Console::new(odm).run().await
}

/// [`run`] with the arguments given (the first is the program's name), so that a test can run
/// a command in its own process.
pub async fn run_with<I, T>(odm: Odm, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Console::new(odm).run_with(args).await
}

/// The console, with what it cannot find in the catalog: the models whose cascade plan and
/// routing report it shows, the subset pairs it verifies, the application's migrations.
/// [`run`] is `Console::new(odm).run()`.
#[derive(Debug)]
pub struct Console {
    odm: Odm,
    models: Vec<plan::Views>,
    subsets: Vec<verify::SubsetViews>,
    migrations: Vec<migrate::Step>,
    /// A call made out of order (`down` before any `migration`), refused by `migrate`.
    misuse: Option<&'static str>,
}

impl Console {
    /// A console over the models of `odm`'s catalog.
    pub fn new(odm: Odm) -> Self {
        Console {
            odm,
            models: Vec::new(),
            subsets: Vec::new(),
            migrations: Vec::new(),
            misuse: None,
        }
    }

    /// Shows the cascade plan and the routing report of model `T` (`plan`, `routing`).
    pub fn model<T: crate::Model>(mut self) -> Self {
        self.models.push(plan::Views::of::<T>());
        self
    }

    /// Verifies and repairs the subset pair whose details model is `D` (`verify`, `repair`),
    /// and shows its routing report.
    pub fn subset<D: crate::subset::Subset>(mut self) -> Self {
        self.subsets.push(verify::SubsetViews::of::<D>());
        self.models.push(plan::Views::of_subset::<D>());
        self
    }

    /// Adds the migration `version` named `name`, as
    /// [`Migrations::add`](crate::migrations::Migrations::add) does: `migrate status` shows it
    /// against its record, `migrate run` runs the pending ones (`--dry-run` lists them).
    pub fn migration<F, Fut, O>(mut self, version: u32, name: impl Into<String>, run: F) -> Self
    where
        F: Fn(Odm) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<O>> + Send + 'static,
        O: crate::migrations::Changed,
    {
        let step = migrate::Step::new(version, name, migrate::erased(run));
        self.migrations.push(step);
        self
    }

    /// Gives the migration added last a down step, as
    /// [`Migrations::down`](crate::migrations::Migrations::down) does: `migrate revert` runs
    /// it when that migration is the last applied. A `down` before any `migration` is refused
    /// when a `migrate` command runs.
    pub fn down<F, Fut, O>(mut self, run: F) -> Self
    where
        F: Fn(Odm) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<O>> + Send + 'static,
        O: crate::migrations::Changed,
    {
        match self.migrations.last_mut() {
            Some(last) => last.down = Some(migrate::erased(run)),
            None => self.misuse = Some("`Console::down` must follow the `migration` it undoes"),
        }
        self
    }

    /// Runs the command the process's arguments name.
    pub async fn run(self) -> ExitCode {
        self.run_with(std::env::args_os()).await
    }

    /// Runs the command `args` name (the first is the program's name).
    pub async fn run_with<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        ExitCode::from(self.exit_code_with(args).await)
    }

    /// [`Console::run_with`], its exit code as a number: [`SUCCESS`], [`PROBLEMS`] or
    /// [`FAILED`].
    pub async fn exit_code_with<I, T>(self, args: I) -> u8
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let cli = match Cli::try_parse_from(&args) {
            Ok(cli) => cli,
            Err(e) => return usage(&e, args.iter().skip(1).any(|a| a == "--json")),
        };
        let json = cli.json;
        let mut me = self;
        me.odm = match connect::connection(me.odm, &cli.connection).await {
            Ok(odm) => odm,
            Err(failure) => {
                failure.print(json);
                return FAILED;
            }
        };
        if let Some(shown) = progress::observer(cli.progress) {
            let observer = match me.odm.progress() {
                Some(own) => progress::both(own.clone(), shown),
                None => shown,
            };
            me.odm = me.odm.with_progress(observer);
        }
        match me.dispatch(cli.command).await {
            Ok(report) => {
                report.print(json);
                report.code()
            }
            Err(e) => {
                errors::Failure::of(&e).print(json);
                FAILED
            }
        }
    }

    async fn dispatch(self, command: Command) -> Result<Report> {
        let odm = &self.odm;
        match command {
            Command::Sync(args) => sync::sync(odm, &args).await,
            Command::Verify(args) => verify::sweep(odm, &self.subsets, &args, false).await,
            Command::Repair(args) => verify::sweep(odm, &self.subsets, &args, true).await,
            Command::Migrate(c) => match self.misuse {
                Some(misuse) => Err(crate::Error::Unsupported(misuse.to_owned())),
                None => migrate::migrate(odm, self.migrations, c).await,
            },
            Command::Cascades(c) => workers::cascades(odm, c).await,
            Command::Follow(c) => workers::follow(odm, c).await,
            Command::Plan(args) => plan::plans(odm, &self.models, &args),
            Command::Routing(args) => plan::routing(odm, &self.models, &args),
            Command::Diagram => Ok(plan::diagram(odm)),
            Command::Explain(args) => explain::explain(odm, &args).await,
        }
    }
}

/// What a command line clap refused ends with: `--help` and `--version` printed on stdout
/// (success), anything else a usage failure (under `--json`, a JSON error too).
fn usage(e: &clap::Error, json: bool) -> u8 {
    if !e.use_stderr() {
        report::stdout(&e.render().to_string());
        return SUCCESS;
    }
    let rendered = e.render().to_string();
    report::stderr(&rendered);
    if json {
        let first = rendered.lines().next().unwrap_or_default();
        let message = first.strip_prefix("error: ").unwrap_or(first);
        let document = serde_json::json!({ "error": message, "kind": "usage" });
        report::stdout(&format!("{document}\n"));
    }
    FAILED
}

/// The operations console of this application's models.
#[derive(Parser, Debug)]
#[command(name = "console")]
struct Cli {
    /// Prints one JSON document on stdout instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// How long-running work (sweeps, syncs, migrations, workers) shows its progress on
    /// stderr: bars on a terminal and lines otherwise (`auto`), or always `bars`, `lines`, or
    /// `none`.
    #[arg(long, global = true, value_enum, default_value_t = progress::Shown::Auto)]
    progress: progress::Shown,
    #[command(flatten)]
    connection: connect::Connection,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Creates the missing indexes and validators and shards what is declared sharded;
    /// reports, never drops, what differs (unless asked).
    Sync(sync::SyncArgs),
    /// Checks every copy, latest-N array, two-way reference, tree and subset pair; writes
    /// nothing. Exits 1 when something is wrong.
    Verify(verify::SweepArgs),
    /// Like `verify`, and repairs what it finds.
    Repair(verify::SweepArgs),
    /// The application's migrations: their state, a run of the pending ones (or what it would
    /// run), the revert of the last one applied.
    #[command(subcommand)]
    Migrate(migrate::MigrateCommand),
    /// Background cascades: how far behind they are, or a worker run until idle.
    #[command(subcommand)]
    Cascades(workers::CascadesCommand),
    /// The follower of other programs' writes: where it stands, or a run until idle.
    #[command(subcommand)]
    Follow(workers::FollowCommand),
    /// What an update of each source field cascades to (the models named to the console).
    Plan(plan::PlanArgs),
    /// Where each generated command goes on a sharded cluster (the models named to the
    /// console).
    Routing(plan::PlanArgs),
    /// The catalog as a Mermaid class diagram.
    Diagram,
    /// The index use of every query shape odm generates for the models (one `explain` each):
    /// exits 1 when one would scan a whole collection.
    Explain(explain::ExplainArgs),
}
