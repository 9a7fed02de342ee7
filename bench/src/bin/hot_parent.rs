//! Hot parents: many writers at once whose maintenance ends on one document, while two threads
//! keep the CPU busy (a machine compiling beside the server). Three kinds of work, each with 10,
//! 40 and 100 concurrent writers in one process:
//!
//! - `latest-N delete`: deletes of log messages that all feed one host's latest-100 array (each
//!   recomputes it, in a transaction);
//! - `rename -> 1 doc`: renames of parts whose summaries all live in one product, the cascade
//!   in a transaction (`TransactionMode::Always`);
//! - `reassign -> 1 owner`: tasks moved to one person (two-way references, in a transaction).
//!
//! Each row prints the operations that succeeded and failed, the median and 99th percentile of
//! one operation's latency, the throughput, and the throughput of one writer doing the same
//! operations in sequence on the same server in the same run. `cargo xtask bench hot_parent`;
//! with `ODM_BENCH_RTT_US=1000` a proxy adds a round trip to every command.

use std::time::{Duration, Instant};

use odm::bson::DateTime;
use odm::prelude::*;
use odm::testing::BusyCpu;
use odm::TransactionMode;
use odm_bench::{show, Bench};

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "hosts")]
struct Host {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[denormalize(
        from = "LogMsg",
        via = "host",
        fields = "time, message",
        latest = 100,
        sort = "time"
    )]
    #[serde(default)]
    logmsgs: Vec<LogSummary>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct LogSummary {
    time: DateTime,
    message: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "logmsg")]
struct LogMsg {
    #[serde(rename = "_id")]
    id: ObjectId,
    time: DateTime,
    message: String,
    #[parent(on_delete = "cascade")]
    host: Ref<Host>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[denormalize(from = "Part", fields = "name", max = 200)]
    parts: Vec<PartSummary>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "people")]
struct Person {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[reference(many, max = 1000, inverse = "owner", on_delete = "pull")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "tasks")]
struct Task {
    #[serde(rename = "_id")]
    id: ObjectId,
    description: String,
    #[parent(inverse = "tasks")]
    owner: Ref<Person>,
}

type Op = std::pin::Pin<Box<dyn std::future::Future<Output = odm::Result<()>> + Send>>;

/// The operations of one row, ready to run.
async fn prepare(odm: &Odm, work: &str, n: usize) -> odm::Result<Vec<Op>> {
    Ok(match work {
        "latest-N delete" => {
            let host = Host {
                id: ObjectId::new(),
                name: "www.example.com".into(),
                logmsgs: Vec::new(),
            };
            odm.insert_one(&host).await?;
            let base = DateTime::now().timestamp_millis();
            let messages: Vec<LogMsg> = (0..2 * n as i64)
                .map(|k| LogMsg {
                    id: ObjectId::new(),
                    time: DateTime::from_millis(base + k),
                    message: format!("message {k}"),
                    host: Ref::new(host.id),
                })
                .collect();
            odm.insert_many(&messages).await?;
            messages[n..]
                .iter()
                .map(|m| {
                    let (odm, id) = (odm.clone(), m.id);
                    Box::pin(async move { odm.delete_one(LogMsg::id().eq(id)).await.map(|_| ()) })
                        as Op
                })
                .collect()
        }
        "rename -> 1 doc" => {
            let parts: Vec<Part> = (0..n)
                .map(|k| Part {
                    id: ObjectId::new(),
                    name: format!("part {k}"),
                })
                .collect();
            odm.insert_many(&parts).await?;
            let product = Product {
                id: ObjectId::new(),
                name: "smoke shifter".into(),
                parts: parts
                    .iter()
                    .map(|p| PartSummary {
                        id: Ref::new(p.id),
                        name: String::new(),
                    })
                    .collect(),
            };
            odm.insert_one(&product).await?;
            parts
                .iter()
                .map(|p| {
                    let (odm, id, name) = (odm.clone(), p.id, format!("{}, zinc", p.name));
                    Box::pin(async move {
                        odm.update_by_id::<Part>(id, Part::name().set(name))
                            .transaction(TransactionMode::Always)
                            .await
                            .map(|_| ())
                    }) as Op
                })
                .collect()
        }
        _ => {
            let person = |name: &str| Person {
                id: ObjectId::new(),
                name: name.into(),
                tasks: Vec::new(),
            };
            let (kate, bob) = (person("Kate"), person("Bob"));
            odm.insert_many(&[kate.clone(), bob.clone()]).await?;
            let tasks: Vec<Task> = (0..n)
                .map(|k| Task {
                    id: ObjectId::new(),
                    description: format!("task {k}"),
                    owner: Ref::new(bob.id),
                })
                .collect();
            odm.insert_many(&tasks).await?;
            tasks
                .iter()
                .map(|t| {
                    let (odm, id, to) = (odm.clone(), t.id, kate.id);
                    Box::pin(async move { odm.reassign(Task::owner(), id, to).await.map(|_| ()) })
                        as Op
                })
                .collect()
        }
    })
}

/// What one row measured.
struct Row {
    ok: usize,
    failed: usize,
    first_error: Option<String>,
    latencies: Vec<Duration>,
    wall: Duration,
}

async fn concurrently(ops: Vec<Op>) -> Row {
    let started = Instant::now();
    let handles: Vec<_> = ops
        .into_iter()
        .map(|op| {
            tokio::spawn(async move {
                let t = Instant::now();
                let out = op.await;
                (t.elapsed(), out)
            })
        })
        .collect();
    let mut row = Row {
        ok: 0,
        failed: 0,
        first_error: None,
        latencies: Vec::new(),
        wall: Duration::ZERO,
    };
    for h in handles {
        let (took, out) = h.await.expect("no panic");
        row.latencies.push(took);
        match out {
            Ok(()) => row.ok += 1,
            Err(e) => {
                row.failed += 1;
                row.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    row.wall = started.elapsed();
    row
}

async fn in_sequence(ops: Vec<Op>) -> odm::Result<Duration> {
    let started = Instant::now();
    for op in ops {
        op.await?;
    }
    Ok(started.elapsed())
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("hot_parent").await?;
    let odm = &bench.odm;
    odm.sync_indexes().await?;
    println!("hot parents: concurrent writers in one process, two threads spinning on the CPU");
    println!(
        "{:<20} {:>7} {:>4} {:>6} {:>9} {:>9} {:>9} {:>11} {:>7}",
        "work", "writers", "ok", "failed", "p50", "p99", "ops/s", "1 writer/s", "ratio"
    );
    let mut all_ok = true;
    for work in ["latest-N delete", "rename -> 1 doc", "reassign -> 1 owner"] {
        for n in [10, 40, 100] {
            let busy = BusyCpu::threads(2, Duration::from_secs(600));
            let sequential = in_sequence(prepare(odm, work, n).await?).await?;
            let mut row = concurrently(prepare(odm, work, n).await?).await;
            drop(busy);
            let ops = row.ok as f64 / row.wall.as_secs_f64();
            let one = n as f64 / sequential.as_secs_f64();
            println!(
                "{:<20} {:>7} {:>4} {:>6} {:>9} {:>9} {:>9.0} {:>11.0} {:>7.2}",
                work,
                n,
                row.ok,
                row.failed,
                show(percentile(&mut row.latencies, 0.5)),
                show(percentile(&mut row.latencies, 0.99)),
                ops,
                one,
                ops / one
            );
            if let Some(e) = row.first_error {
                all_ok = false;
                println!("    first failure: {e}");
            }
        }
    }
    println!(
        "every operation succeeded: {all_ok} (ratio: throughput of the concurrent writers over one writer in sequence)"
    );
    bench.finish().await
}
