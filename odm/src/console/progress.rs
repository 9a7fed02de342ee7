//! How the console shows the progress of long work ([`crate::progress`]): bars with rate and
//! time left on a terminal, lines otherwise (a log, a pipe, a test), on stderr so that stdout
//! keeps the command's report (its one JSON document under `--json`).

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::ValueEnum;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::progress::{Observer, Progress, Task};

/// `--progress`: how long work is shown.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Shown {
    /// Bars when stderr is a terminal, lines otherwise.
    #[default]
    Auto,
    /// Progress bars with rate and time left.
    Bars,
    /// One line per report (at most one a second per piece of work, plus its start and end).
    Lines,
    /// Nothing.
    None,
}

/// The observer drawing what `shown` asks for, or none.
pub(super) fn observer(shown: Shown) -> Option<Observer> {
    let bars = match shown {
        Shown::None => return None,
        Shown::Bars => true,
        Shown::Lines => false,
        Shown::Auto => std::io::stderr().is_terminal(),
    };
    Some(if bars {
        let drawn = Bars::default();
        Observer::new(move |p| drawn.show(p)).every(Duration::from_millis(50))
    } else {
        Observer::new(line).every(Duration::from_secs(1))
    })
}

/// The observer calling `first`, then `second`.
pub(super) fn both(first: Observer, second: Observer) -> Observer {
    Observer::new(move |p| {
        first.report(p);
        second.report(p);
    })
}

fn line(p: &Progress) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "progress: {p}");
}

/// The bars of the pieces under way, one per task and phase.
#[derive(Default)]
struct Bars {
    all: MultiProgress,
    running: Arc<Mutex<HashMap<(Task, String), ProgressBar>>>,
}

impl Bars {
    fn show(&self, p: &Progress) {
        let Ok(mut running) = self.running.lock() else {
            return;
        };
        let key = (p.task, p.phase.clone());
        let bar = running
            .entry(key.clone())
            .or_insert_with(|| self.all.add(bar_for(p)));
        if let Some(total) = p.total {
            bar.set_length(total);
        }
        bar.set_position(p.done);
        if p.finished {
            bar.finish();
            running.remove(&key);
        }
    }
}

fn bar_for(p: &Progress) -> ProgressBar {
    let prefix = format!("{} {}", p.task.name(), p.phase);
    let unit = p.unit.name();
    let (bar, template) = match p.total {
        Some(total) => (
            ProgressBar::new(total),
            format!("{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{per_sec}} eta {{eta}}"),
        ),
        None => (
            ProgressBar::no_length(),
            format!("{{prefix}} {{spinner}} {{pos}} {unit} {{per_sec}} {{elapsed}}"),
        ),
    };
    let style = ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.with_style(style).with_prefix(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Unit;

    fn at(done: u64, total: u64, elapsed_ms: u64) -> String {
        let p = Progress {
            task: Task::Verify,
            phase: "copies products.parts".to_owned(),
            done,
            total: Some(total),
            unit: Unit::Documents,
            elapsed: Duration::from_millis(elapsed_ms),
            finished: false,
        };
        p.to_string()
    }

    #[test]
    fn the_time_left_is_said_in_whole_seconds_never_0ns() {
        // All done but not yet finished: nothing left to say.
        let line = at(500, 500, 1000);
        assert!(!line.contains("left"), "{line}");
        assert!(at(450, 500, 3000).ends_with(", under a second left"));
        assert!(at(100, 2000, 1000).ends_with(", about 19s left"));
        assert!(at(10, 2000, 1000).ends_with(", about 3m 19s left"));
        assert!(at(1, 20000, 1000).ends_with(", about 5h 33m left"));
    }
}
