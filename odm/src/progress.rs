//! Progress of long work: the verify and repair sweeps, syncs, migrations, the cascade worker,
//! the follower and cascades report what they have done to an [`Observer`] the application
//! installs on its handle with [`Odm::with_progress`](crate::Odm::with_progress). No terminal
//! is assumed: the observer is a callback or a channel, and the application draws what it
//! likes (the operations console, behind the `console` feature, draws bars, or lines when its
//! output is not a terminal).
//!
//! ```no_run
//! use odm::progress::{Observer, Progress};
//!
//! # async fn run(odm: odm::Odm) -> odm::Result<()> {
//! let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
//! let odm = odm.with_progress(Observer::channel(tx));
//! tokio::spawn(async move {
//!     while let Some(p) = rx.recv().await {
//!         eprintln!("{p}"); // "verify copies products.parts.name: 40000/200000 documents, ..."
//!     }
//! });
//! let report = odm.verify_copies().await?;
//! # let _ = report;
//! # Ok(())
//! # }
//! ```
//!
//! A handle without an observer (the default) reports nothing and pays for nothing: no
//! command, no clock read. With one, a sweep sends one `count` per collection it reads to know
//! its total (the collection's count from its metadata, `estimatedDocumentCount`, when the
//! sweep reads all of it; `countDocuments` with the sweep's filter when it reads a kind's
//! documents), corrected to the documents actually read when the sweep ends, and each piece of work is reported
//! when it starts, at most once per [interval](Observer::every) while it runs (checked once per
//! batch, event or command, never per document), and when it ends.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What kind of work a [`Progress`] reports on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Task {
    /// A verify sweep: copies, latest-N arrays, two-way references, trees, subset pairs.
    Verify,
    /// A repair sweep (the same, writing what it finds wrong).
    Repair,
    /// Creating indexes, validators, shardings and time-series collections.
    Sync,
    /// Running the pending migrations.
    Migrate,
    /// One cascade of a source's changed fields into their copies.
    Cascade,
    /// The background cascade worker working off its intents.
    Worker,
    /// The follower applying other programs' writes.
    Follow,
}

impl Task {
    /// The task's name, in lower case (`verify`, `sync`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Task::Verify => "verify",
            Task::Repair => "repair",
            Task::Sync => "sync",
            Task::Migrate => "migrate",
            Task::Cascade => "cascade",
            Task::Worker => "worker",
            Task::Follow => "follow",
        }
    }
}

/// What [`Progress::done`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unit {
    /// Documents read (a sweep).
    Documents,
    /// Collections handled (a sync).
    Collections,
    /// Migrations run or found done.
    Migrations,
    /// Commands sent (a subset pair's sweep).
    Commands,
    /// Changed sources whose copies are written, once per copy (a cascade).
    Sources,
    /// Cascade intents applied (the worker).
    Intents,
    /// Change events applied (the follower).
    Events,
}

impl Unit {
    /// The unit's name, in the plural (`documents`, `events`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Documents => "documents",
            Unit::Collections => "collections",
            Unit::Migrations => "migrations",
            Unit::Commands => "commands",
            Unit::Sources => "sources",
            Unit::Intents => "intents",
            Unit::Events => "events",
        }
    }
}

/// Where one piece of long work stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The kind of work.
    pub task: Task,
    /// The piece under way, for people: `copies products.parts.name`, `tree categories`,
    /// `migration 3 split_names`, ...
    pub phase: String,
    /// How much is done, in [`Progress::unit`]s.
    pub done: u64,
    /// How much there is, when it is known beforehand (a sweep's documents, a sync's models);
    /// `None` for work whose end is not known (the follower, the worker).
    pub total: Option<u64>,
    /// What `done` and `total` count.
    pub unit: Unit,
    /// Time since the piece started.
    pub elapsed: Duration,
    /// Whether this is the piece's last report: it has ended (an error ends it without one).
    pub finished: bool,
}

impl Progress {
    /// Units done per second since the piece started (0 before any time has passed).
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.done as f64 / secs
        } else {
            0.0
        }
    }

    /// The time left at the rate so far, when the total is known and something is done.
    pub fn eta(&self) -> Option<Duration> {
        let total = self.total?;
        let rate = self.rate();
        (rate > 0.0).then(|| Duration::from_secs_f64(total.saturating_sub(self.done) as f64 / rate))
    }

    /// The share done, from 0 to 1, when the total is known (1 for an empty total).
    pub fn fraction(&self) -> Option<f64> {
        self.total.map(|t| {
            if t == 0 {
                1.0
            } else {
                (self.done as f64 / t as f64).min(1.0)
            }
        })
    }
}

impl fmt::Display for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.task.name(), self.phase, self.done)?;
        if let Some(total) = self.total {
            write!(f, "/{total}")?;
        }
        write!(f, " {}, {:.0}/s", self.unit.name(), self.rate())?;
        if self.finished {
            write!(f, ", done in {:.1?}", self.elapsed)
        } else if let Some(eta) = self.eta().filter(|_| self.total > Some(self.done)) {
            write!(f, ", {} left", about(eta))
        } else {
            Ok(())
        }
    }
}

/// A time left as people say it: `about 17s`, `about 3m 20s`, `about 1h 5m`, `under a second`
/// (never `0ns`, nor milliseconds that the next report would contradict).
fn about(left: Duration) -> String {
    let secs = left.as_secs_f64().round() as u64;
    match secs {
        0 => "under a second".to_owned(),
        1..60 => format!("about {secs}s"),
        60..3600 => format!("about {}m {}s", secs / 60, secs % 60),
        _ => format!("about {}h {}m", secs / 3600, secs % 3600 / 60),
    }
}

type Sink = dyn Fn(&Progress) + Send + Sync;

/// Receives the [`Progress`] reports of a handle's long work: a callback or a channel, called
/// on the task doing the work (keep it short; a channel hands the report elsewhere).
#[derive(Clone)]
pub struct Observer {
    sink: Arc<Sink>,
    every: Duration,
}

impl Observer {
    /// An observer calling `f` with each report, at most every 100 ms per piece of work (plus
    /// its first and its last report).
    pub fn new(f: impl Fn(&Progress) + Send + Sync + 'static) -> Observer {
        Observer {
            sink: Arc::new(f),
            every: Duration::from_millis(100),
        }
    }

    /// An observer sending each report on `tx` (a report the receiver has dropped is lost).
    pub fn channel(tx: tokio::sync::mpsc::UnboundedSender<Progress>) -> Observer {
        Observer::new(move |p| {
            let _ = tx.send(p.clone());
        })
    }

    /// Hands `progress` to the observer (as odm does with each report).
    pub fn report(&self, progress: &Progress) {
        (self.sink)(progress);
    }

    /// The same observer, reporting a running piece at most once per `interval`
    /// (`Duration::ZERO`: after every batch, event or command).
    pub fn every(mut self, interval: Duration) -> Observer {
        self.every = interval;
        self
    }
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observer")
            .field("every", &self.every)
            .finish_non_exhaustive()
    }
}

/// One piece of work's reporting: a no-op without an observer.
pub(crate) struct Tracker {
    observed: Option<Observed>,
}

struct Observed {
    observer: Observer,
    progress: Progress,
    started: Instant,
    reported: Instant,
}

impl Tracker {
    /// A tracker for a piece of `task` named `phase` (built only when observed), reporting its
    /// start at once.
    pub(crate) fn start(
        observer: Option<&Observer>,
        task: Task,
        unit: Unit,
        phase: impl FnOnce() -> String,
        total: Option<u64>,
    ) -> Tracker {
        let Some(observer) = observer else {
            return Tracker { observed: None };
        };
        let now = Instant::now();
        let tracker = Tracker {
            observed: Some(Observed {
                observer: observer.clone(),
                progress: Progress {
                    task,
                    phase: phase(),
                    done: 0,
                    total,
                    unit,
                    elapsed: Duration::ZERO,
                    finished: false,
                },
                started: now,
                reported: now,
            }),
        };
        if let Some(o) = &tracker.observed {
            (o.observer.sink)(&o.progress);
        }
        tracker
    }

    /// Counts `n` more done, and reports when the interval has passed since the last report.
    pub(crate) fn advance(&mut self, n: u64) {
        let Some(o) = &mut self.observed else {
            return;
        };
        o.progress.done += n;
        let now = Instant::now();
        if now.duration_since(o.reported) >= o.observer.every {
            o.reported = now;
            o.progress.elapsed = now.duration_since(o.started);
            (o.observer.sink)(&o.progress);
        }
    }

    /// Takes what is done as the total (a count taken before a read that other writes may
    /// have changed since).
    pub(crate) fn total_is_done(&mut self) {
        if let Some(o) = &mut self.observed {
            o.progress.total = Some(o.progress.done);
        }
    }

    /// Reports the piece's end (once; later calls do nothing).
    pub(crate) fn finish(&mut self) {
        if let Some(mut o) = self.observed.take() {
            o.progress.elapsed = o.started.elapsed();
            o.progress.finished = true;
            (o.observer.sink)(&o.progress);
        }
    }
}
