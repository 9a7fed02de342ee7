//! `cascades` and `follow`: the background workers, their state, and a run until idle.

use std::time::Duration;

use clap::Subcommand;
use serde_json::json;

use super::report::Report;
use crate::{Odm, Result};

#[derive(Subcommand, Debug)]
pub(super) enum CascadesCommand {
    /// The background cascades not yet applied and the age of the oldest.
    Status {
        /// Exits 1 when some are pending or failing.
        #[arg(long)]
        check: bool,
    },
    /// Runs a cascade worker until no intent is ready to claim.
    Run {
        /// Copies written per batch (and transaction).
        #[arg(long, default_value_t = 1000)]
        batch_size: usize,
    },
}

#[derive(Subcommand, Debug)]
pub(super) enum FollowCommand {
    /// Where the follower stands: events not yet applied, the oldest, the lease.
    Status {
        /// Exits 1 when events are waiting to be applied.
        #[arg(long)]
        check: bool,
    },
    /// Applies other programs' writes until none comes for `--max-wait-ms`, then gives the
    /// lease up.
    Run {
        /// How long to wait for an event before stopping, in milliseconds.
        #[arg(long, default_value_t = 500)]
        max_wait_ms: u64,
    },
}

fn date(d: Option<bson::DateTime>) -> String {
    d.and_then(|d| d.try_to_rfc3339_string().ok())
        .unwrap_or_else(|| "-".to_owned())
}

pub(super) async fn cascades(odm: &Odm, command: CascadesCommand) -> Result<Report> {
    match command {
        CascadesCommand::Status { check } => {
            let s = odm.cascade_status().await?;
            let text = format!(
                "pending {}, claimed {}, failing {}, oldest {}, lag {:.3} s\n",
                s.pending,
                s.claimed,
                s.failing,
                date(s.oldest),
                s.lag.as_secs_f64()
            );
            let json = json!({
                "command": "cascades status",
                "pending": s.pending, "claimed": s.claimed, "failing": s.failing,
                "oldest": s.oldest.map(|_| date(s.oldest)), "lag_ms": s.lag.as_millis() as u64,
            });
            Ok(Report::new(text, json, check && s.pending > 0))
        }
        CascadesCommand::Run { batch_size } => {
            let mut worker = odm.cascade_worker().batch_size(batch_size);
            let r = worker.run_until_idle().await?;
            let failed: Vec<String> = r.failed.iter().map(ToString::to_string).collect();
            let mut text = format!(
                "applied {} intents in {} batches, {} copies written, lag {:.3} s, {} lost to another worker\n",
                r.applied,
                r.batches,
                r.written,
                r.lag.as_secs_f64(),
                r.lost
            );
            for f in &failed {
                text.push_str(&format!("  FAILED {f}\n"));
            }
            let json = json!({
                "command": "cascades run",
                "applied": r.applied, "batches": r.batches, "written": r.written,
                "lag_ms": r.lag.as_millis() as u64, "lost": r.lost, "failed": failed,
            });
            Ok(Report::new(text, json, !failed.is_empty()))
        }
    }
}

pub(super) async fn follow(odm: &Odm, command: FollowCommand) -> Result<Report> {
    match command {
        FollowCommand::Status { check } => {
            let s = odm.follower_status().await?;
            let holder = s
                .holder
                .map(|(id, until)| format!("{id} until {}", date(Some(until))));
            let text = format!(
                "started {}, behind {}, oldest {}, through {}, applied {}, lease {}\n",
                s.started,
                s.behind,
                date(s.oldest),
                date(s.through),
                s.applied,
                holder.as_deref().unwrap_or("free")
            );
            let json = json!({
                "command": "follow status",
                "started": s.started, "behind": s.behind,
                "oldest": s.oldest.map(|_| date(s.oldest)),
                "through": s.through.map(|_| date(s.through)),
                "applied": s.applied, "holder": holder,
            });
            Ok(Report::new(text, json, check && s.behind > 0))
        }
        FollowCommand::Run { max_wait_ms } => {
            let mut follower = odm.follower().max_wait(Duration::from_millis(max_wait_ms));
            let r = follower.run_until_idle().await?;
            follower.stop().await?;
            let problems: Vec<String> = r
                .violations
                .iter()
                .map(ToString::to_string)
                .chain(
                    r.bad_documents
                        .iter()
                        .map(|b| format!("{} {} {}: {}", b.collection, b.id, b.path, b.message)),
                )
                .chain(r.tree_cycles.iter().map(|id| format!("tree cycle at {id}")))
                .collect();
            let mut text = format!(
                "{} events, {} relevant: {} cascaded, {} deleted, {} latest-N parents, {} tree nodes, {} tree nodes deleted, {} two-way parents, {} details deleted{}\n",
                r.events,
                r.relevant,
                r.cascaded,
                r.deleted,
                r.latest_parents,
                r.tree_nodes,
                r.tree_deleted,
                r.two_way_parents,
                r.details_deleted,
                if r.elsewhere { " (another follower holds the lease)" } else { "" }
            );
            if r.history_lost.is_some() {
                text.push_str("  the stored position was lost: the repairing sweeps ran\n");
            }
            for p in &problems {
                text.push_str(&format!("  {p}\n"));
            }
            let json = json!({
                "command": "follow run",
                "events": r.events, "relevant": r.relevant, "cascaded": r.cascaded,
                "deleted": r.deleted, "latest_parents": r.latest_parents,
                "tree_nodes": r.tree_nodes, "tree_deleted": r.tree_deleted,
                "two_way_parents": r.two_way_parents, "details_deleted": r.details_deleted,
                "elsewhere": r.elsewhere, "history_lost": r.history_lost.is_some(),
                "problems": problems,
            });
            Ok(Report::new(text, json, !problems.is_empty()))
        }
    }
}
