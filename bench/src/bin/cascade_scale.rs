//! Cascade at scale: one rename of a part copied into 200,000 products (`CASCADE_SCALE_N` for
//! another count, e.g. 1000000), written in batches of 1,000, two ways: (a) odm's background
//! cascade (`cascade = "background"`: the rename records an intent, a worker writes the copies
//! batch after batch, each batch in a transaction with its intent), (b) hand-written: the part's
//! `update_one`, then a cursor of the products' `_id`s and one `update_many` with array
//! filters per 1,000 of them, and (c) the same with each batch in a transaction of its own,
//! as the worker's are (what the transactions alone cost on the server). Each run is a child
//! process of its own, so that its peak memory (VmHWM) is its own; the cases alternate, medians
//! of the times are compared.
//!
//! `cargo xtask bench cascade_scale` runs it (release build).

use std::process::Command;
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, Document};
use odm::mongodb::options::{FindOptions, UpdateOptions};
use odm::prelude::*;
use odm_bench::{median, show, show_commands, Bench};

const BATCH: usize = 1_000;
const ROUNDS: usize = 5;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i64,
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
    id: i64,
    name: String,
    #[denormalize(from = "Part", fields = "name", max = 200, cascade = "background")]
    parts: Vec<PartSummary>,
}

fn dependents() -> i64 {
    std::env::var("CASCADE_SCALE_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000)
}

/// Peak resident memory of this process, in KiB (VmHWM).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// One case in this (child) process: renames part 0 to `name` and writes every copy.
async fn child(case: &str, uri: &str, db_name: &str, name: &str) -> odm::Result<()> {
    let mut options = odm::mongodb::options::ClientOptions::parse(uri).await?;
    let log = odm::monitor::CommandLog::new();
    log.attach(&mut options);
    let client = odm::mongodb::Client::with_options(options)?;
    let db = client.database(db_name);
    let odm = Odm::new(db.clone());
    odm.supports_transactions().await?;
    log.clear();
    let started = Instant::now();
    let written = match case {
        "odm" => {
            odm.update_by_id::<Part>(0_i64, Part::name().set(name))
                .await?;
            let report = odm
                .cascade_worker()
                .batch_size(BATCH)
                .run_until_idle()
                .await?;
            assert!(report.failed.is_empty(), "{:?}", report.failed);
            report.written
        }
        hand => {
            // "hand_txn": each batch in a transaction of its own, as the worker's are.
            let mut session = match hand {
                "hand_txn" => Some(client.start_session().await?),
                _ => None,
            };
            db.collection::<Document>("parts")
                .update_one(doc! { "_id": 0_i64 }, doc! { "$set": { "name": name } })
                .await?;
            let products = db.collection::<Document>("products");
            let mut cursor = products
                .find(doc! { "parts.id": 0_i64 })
                .with_options(
                    FindOptions::builder()
                        .projection(doc! { "_id": 1 })
                        .batch_size(BATCH as u32)
                        .build(),
                )
                .await?;
            let mut written = 0;
            let mut ids: Vec<Bson> = Vec::with_capacity(BATCH);
            loop {
                let next = cursor.try_next().await?;
                let end = next.is_none();
                if let Some(id) = next.and_then(|mut d| d.remove("_id")) {
                    ids.push(id);
                }
                if (ids.len() == BATCH || end) && !ids.is_empty() {
                    let batch = std::mem::take(&mut ids);
                    let update = products
                        .update_many(
                            doc! { "_id": { "$in": batch } },
                            doc! { "$set": { "parts.$[p].name": name } },
                        )
                        .with_options(
                            UpdateOptions::builder()
                                .array_filters(vec![doc! { "p.id": 0_i64 }])
                                .build(),
                        );
                    let r = match session.as_mut() {
                        Some(s) => {
                            s.start_transaction().await?;
                            let r = update.session(&mut *s).await?;
                            s.commit_transaction().await?;
                            r
                        }
                        None => update.await?,
                    };
                    written += r.modified_count;
                }
                if end {
                    break;
                }
            }
            written
        }
    };
    let elapsed = started.elapsed();
    println!(
        "RESULT {} {} {} {}",
        elapsed.as_micros(),
        peak_rss_kib(),
        written,
        show_commands(&log.names())
    );
    Ok(())
}

struct Run {
    elapsed: Duration,
    rss_kib: u64,
    written: u64,
    commands: String,
}

fn spawn(case: &str, uri: &str, db: &str, name: &str) -> Run {
    let out = Command::new(std::env::current_exe().expect("this binary"))
        .args(["--case", case, uri, db, name])
        .output()
        .expect("run a case");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .unwrap_or_else(|| {
            panic!(
                "case {case} failed: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let mut parts = line.splitn(5, ' ').skip(1);
    let mut next = || parts.next().unwrap_or_default().to_owned();
    Run {
        elapsed: Duration::from_micros(next().parse().unwrap_or(0)),
        rss_kib: next().parse().unwrap_or(0),
        written: next().parse().unwrap_or(0),
        commands: next(),
    }
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--case") {
        return child(&args[2], &args[3], &args[4], &args[5]).await;
    }
    let n = dependents();
    let bench = Bench::start("cascade_scale").await?;
    bench.odm.sync_indexes().await?;
    bench.odm.cascade_worker().create_index().await?;
    bench
        .db
        .collection::<Document>("parts")
        .insert_many(vec![
            doc! { "_id": 0_i64, "name": "grommet" },
            doc! { "_id": 1_i64, "name": "washer" },
        ])
        .await?;
    let started = Instant::now();
    let products = bench.db.collection::<Document>("products");
    let mut first = 0;
    while first < n {
        let docs: Vec<Document> = (first..(first + 10_000).min(n))
            .map(|i| {
                doc! {
                    "_id": i,
                    "name": format!("product {i}"),
                    "parts": [{ "id": 0_i64, "name": "grommet" }, { "id": 1_i64, "name": "washer" }],
                }
            })
            .collect();
        products.insert_many(docs).await?;
        first += 10_000;
    }
    println!(
        "{n} products, each with a summary of part 0, inserted in {}",
        show(started.elapsed())
    );
    let uri = odm::testing::test_uri()?;
    let db = bench.db.name().to_owned();
    let rounds: usize = if n > 500_000 { 1 } else { ROUNDS };
    let mut odm_runs = Vec::new();
    let mut hand_runs = Vec::new();
    let mut txn_runs = Vec::new();
    for round in 0..rounds {
        // Alternate which goes first; every rename writes every copy.
        let order = if round % 2 == 0 {
            ["odm", "hand", "hand_txn"]
        } else {
            ["hand_txn", "hand", "odm"]
        };
        for case in order {
            let run = spawn(case, &uri, &db, &format!("grommet {round} {case}"));
            assert_eq!(run.written, n as u64, "{case} wrote every copy");
            println!(
                "  round {round} {case:>8}: {:>9}, peak RSS {:>6.1} MB, {}",
                show(run.elapsed),
                run.rss_kib as f64 / 1024.0,
                if round == 0 {
                    run.commands.as_str()
                } else {
                    ""
                }
            );
            match case {
                "odm" => odm_runs.push(run),
                "hand" => hand_runs.push(run),
                _ => txn_runs.push(run),
            }
        }
    }
    let peak = |runs: &[Run]| runs.iter().map(|r| r.rss_kib).max().unwrap_or(0) as f64 / 1024.0;
    let (o, h, t) = (
        median(odm_runs.iter().map(|r| r.elapsed).collect()),
        median(hand_runs.iter().map(|r| r.elapsed).collect()),
        median(txn_runs.iter().map(|r| r.elapsed).collect()),
    );
    println!("one rename into {n} copies, batches of {BATCH}, median of {rounds}:");
    println!(
        "  (a) odm background cascade: {:>9}  peak RSS {:.1} MB",
        show(o),
        peak(&odm_runs)
    );
    println!(
        "  (b) hand-written batches:   {:>9}  peak RSS {:.1} MB",
        show(h),
        peak(&hand_runs)
    );
    println!(
        "  (c) hand-written batches, each in a transaction: {:>9}  peak RSS {:.1} MB",
        show(t),
        peak(&txn_runs)
    );
    println!(
        "  ratio a/b: {:.3} (target <= 1.10; memory target < 100 MB)   a/c: {:.3}   c/b: {:.3} (the transactions alone)",
        o.as_secs_f64() / h.as_secs_f64(),
        o.as_secs_f64() / t.as_secs_f64(),
        t.as_secs_f64() / h.as_secs_f64()
    );
    bench.finish().await?;
    Ok(())
}
