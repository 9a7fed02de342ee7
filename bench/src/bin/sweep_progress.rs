//! What progress reporting costs a sweep: `verify_copies` over 200,000 products (each holding
//! a summary of one of 1,000 parts), batches of 1,000, run alternately on a handle without an
//! observer, with the default observer (a report at most every 100 ms) and with one hearing
//! every batch (`every(ZERO)`), in one run on one server. Medians of the wall time per sweep,
//! ratios to the sweep without an observer, and the commands each sends (the observed sweeps
//! send one `count` more per swept collection).
//!
//! `cargo xtask bench sweep_progress` runs it (release build). `ODM_BENCH_SWEEP_DOCS` changes
//! the number of products.

use std::future::IntoFuture;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use odm::bson::{doc, Document};
use odm::prelude::*;
use odm::progress::Observer;
use odm_bench::{median, show, show_commands, Bench};

const ITERATIONS: usize = 5;
const PARTS: i64 = 1_000;

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
    #[denormalize(from = "Part", fields = "name", max = 10)]
    parts: Vec<PartSummary>,
}

async fn seed(bench: &Bench, products: i64) -> odm::Result<()> {
    let parts: Vec<Document> = (0..PARTS)
        .map(|i| doc! { "_id": i, "name": format!("grommet {i}") })
        .collect();
    bench
        .db
        .collection::<Document>("parts")
        .insert_many(parts)
        .await?;
    let coll = bench.db.collection::<Document>("products");
    let mut start = 0;
    while start < products {
        let end = (start + 10_000).min(products);
        let chunk: Vec<Document> = (start..end)
            .map(|i| {
                let part = i % PARTS;
                doc! { "_id": i, "parts": [{ "id": part, "name": format!("grommet {part}") }] }
            })
            .collect();
        coll.insert_many(chunk).await?;
        start = end;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let products: i64 = std::env::var("ODM_BENCH_SWEEP_DOCS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let bench = Bench::start("sweep_progress").await?;
    seed(&bench, products).await?;
    let reports = Arc::new(AtomicU64::new(0));
    let heard = Arc::clone(&reports);
    let counting = move || {
        let heard = Arc::clone(&heard);
        Observer::new(move |_| {
            heard.fetch_add(1, Ordering::Relaxed);
        })
    };
    let handles = [
        ("no observer", bench.odm.clone()),
        (
            "observer (100 ms)",
            bench.odm.clone().with_progress(counting()),
        ),
        (
            "observer (every batch)",
            bench
                .odm
                .clone()
                .with_progress(counting().every(Duration::ZERO)),
        ),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); handles.len()];
    let mut sent: Vec<Vec<String>> = vec![Vec::new(); handles.len()];
    for _ in 0..ITERATIONS {
        for (i, (_, odm)) in handles.iter().enumerate() {
            let (took, commands, report) = bench
                .measure(|| odm.verify_copies().batch_size(1_000).into_future())
                .await;
            let report = report?;
            assert!(report.is_consistent(), "{report}");
            assert_eq!(report.documents_checked, products as u64);
            times[i].push(took);
            sent[i] = commands;
        }
    }
    println!("verify_copies over {products} products, batches of 1,000, {ITERATIONS} runs each:");
    let base = median(times[0].clone());
    for (i, (name, _)) in handles.iter().enumerate() {
        let m = median(times[i].clone());
        println!(
            "  {name:<24} median {:>10}  ratio {:.3}  commands: {}",
            show(m),
            m.as_secs_f64() / base.as_secs_f64(),
            show_commands(&sent[i])
        );
    }
    println!(
        "  reports heard: {} over {} observed sweeps",
        reports.load(Ordering::Relaxed),
        ITERATIONS * 2
    );
    bench.finish().await
}
