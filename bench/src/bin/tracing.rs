//! Tracing overhead: `insert_one` and a `find_one` by `_id`, 2,000 of each per iteration, in
//! one run on one server, each interleaved with the driver's typed collection doing the same:
//! first odm with no subscriber (every operation checks its span's cached interest, nothing
//! more), then odm with a subscriber interested in every `odm` span (a span built, entered per
//! poll, its fields recorded, the clock read twice). Medians per operation and the ratios to
//! the driver. Then an `insert_many` of no document, which sends nothing, so that what is left
//! is the operation's own CPU (the builder, the boxed future, the interest check or the span).
//!
//! `cargo xtask bench tracing` runs it (release build).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use odm::bson::oid::ObjectId;
use odm::prelude::*;
use odm_bench::{median, Bench};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

const OPS: usize = 2_000;
const ITERATIONS: usize = 7;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "items")]
struct Item {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    qty: i64,
}

/// Takes every `odm` span and records nothing: what the library pays for being traced.
struct Interested {
    next: AtomicU64,
}

impl Subscriber for Interested {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "odm"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn items(n: usize) -> Vec<Item> {
    (0..n)
        .map(|i| Item {
            id: ObjectId::new(),
            name: format!("item {i}"),
            qty: i as i64,
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Driver,
    Odm,
    Traced,
}

async fn inserts(bench: &Bench, way: Way) -> odm::Result<Duration> {
    let batch = items(OPS);
    let coll = bench.odm.collection::<Item>();
    let _guard = (way == Way::Traced).then(|| {
        tracing::subscriber::set_default(Interested {
            next: AtomicU64::new(0),
        })
    });
    let started = Instant::now();
    for item in &batch {
        match way {
            Way::Driver => {
                coll.insert_one(item).await?;
            }
            Way::Odm | Way::Traced => {
                bench.odm.insert_one(item).await?;
            }
        }
    }
    Ok(started.elapsed() / OPS as u32)
}

/// An `insert_many` of nothing, `n` times: no command is sent.
async fn nothing(bench: &Bench, traced: bool, n: u32) -> odm::Result<Duration> {
    let _guard = traced.then(|| {
        tracing::subscriber::set_default(Interested {
            next: AtomicU64::new(0),
        })
    });
    let none: Vec<Item> = Vec::new();
    let started = Instant::now();
    for _ in 0..n {
        bench.odm.insert_many(&none).await?;
    }
    Ok(started.elapsed() / n)
}

fn us(d: Duration) -> String {
    format!("{:.2} µs", d.as_secs_f64() * 1e6)
}

fn ns(d: Duration) -> String {
    format!("{} ns", d.as_nanos())
}

async fn finds(bench: &Bench, way: Way, ids: &[ObjectId]) -> odm::Result<Duration> {
    let coll = bench.odm.collection::<Item>();
    let _guard = (way == Way::Traced).then(|| {
        tracing::subscriber::set_default(Interested {
            next: AtomicU64::new(0),
        })
    });
    let started = Instant::now();
    for id in ids {
        let found = match way {
            Way::Driver => coll.find_one(odm::bson::doc! {"_id": id}).await?,
            Way::Odm | Way::Traced => bench.odm.get::<Item>(*id).await?,
        };
        assert!(found.is_some());
    }
    Ok(started.elapsed() / ids.len() as u32)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("tracing").await?;
    let seed = items(OPS);
    bench.odm.insert_many(&seed).await?;
    let ids: Vec<ObjectId> = seed.iter().map(|i| i.id).collect();
    // Without a subscriber first: once a subscriber has been set, even a scoped one that is
    // gone, tracing keeps asking the dispatcher, which is not what a process that never traces
    // pays. Each phase interleaves its ways with the driver.
    let mut rows = Vec::new();
    let mut nothings = Vec::new();
    for traced in [Way::Odm, Way::Traced] {
        let ways = [Way::Driver, traced];
        let mut insert = [Vec::new(), Vec::new()];
        let mut find = [Vec::new(), Vec::new()];
        let mut nothing_samples = Vec::new();
        for round in 0..ITERATIONS {
            for k in 0..ways.len() {
                let w = (round + k) % ways.len();
                insert[w].push(inserts(&bench, ways[w]).await?);
                find[w].push(finds(&bench, ways[w], &ids).await?);
            }
            nothing_samples.push(nothing(&bench, traced == Way::Traced, 200_000).await?);
        }
        rows.push((traced, insert.map(median), find.map(median)));
        nothings.push(median(nothing_samples));
    }
    println!("\n{OPS} operations x {ITERATIONS} iterations, median per operation");
    println!(
        "{:<12} {:<18} {:>10} {:>10} {:>8}",
        "operation", "odm", "driver", "odm", "odm/drv"
    );
    for (way, insert, find) in rows {
        let label = match way {
            Way::Traced => "with a subscriber",
            _ => "no subscriber",
        };
        for (name, [d, o]) in [("insert_one", insert), ("find by _id", find)] {
            println!(
                "{:<12} {:<18} {:>10} {:>10} {:>8.3}",
                name,
                label,
                us(d),
                us(o),
                o.as_secs_f64() / d.as_secs_f64()
            );
        }
    }
    println!(
        "\nan insert_many of nothing (no command), median per call: {} without a subscriber, {} with one",
        ns(nothings[0]),
        ns(nothings[1])
    );
    bench.finish().await
}
