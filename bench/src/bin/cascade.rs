//! Cascade: rename a part whose name is copied into 20,000 products (each with 20 part
//! summaries), three ways, in one run on one server: (a) an odm update with its cascade, (b)
//! hand-written `update_one` on the part plus `update_many` with array filters on products,
//! (c) a naive read-modify-write of each product. Also the insert throughput of products
//! whose summaries odm fills, against hand-written inserts of the same documents.
//!
//! `cargo xtask bench cascade` runs it (release build).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use odm::bson::{doc, oid::ObjectId, Document};
use odm::mongodb::options::UpdateOptions;
use odm::prelude::*;
use odm::TransactionMode;
use odm_bench::{median, show, show_commands, Bench, Lcg};

const PRODUCTS: usize = 20_000;
// (a') asks for a transaction; one that rewrites 20,000 products is too large for the dev
// server's cache, so it is aborted and the cascade falls back to (a)'s path: the figure shows
// what that costs.
const SUMMARIES: usize = 20;
const PARTS: usize = 2_000;
const BATCH: usize = 1_000;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i64,
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
    catalog_number: i64,
    #[denormalize(from = "Part", fields = "name", max = 200)]
    parts: Vec<PartSummary>,
}

fn products(parts: &[Part], rng: &mut Lcg, from: usize, to: usize) -> Vec<Product> {
    (from..to)
        .map(|i| {
            // Every product holds part 0 (the one renamed) and 19 others.
            let mut picked: Vec<usize> = vec![0];
            let mut seen: HashSet<usize> = picked.iter().copied().collect();
            while picked.len() < SUMMARIES {
                let p = 1 + rng.below((PARTS - 1) as u64) as usize;
                if seen.insert(p) {
                    picked.push(p);
                }
            }
            Product {
                id: ObjectId::new(),
                name: format!("product {i}"),
                catalog_number: i as i64,
                parts: picked
                    .into_iter()
                    .map(|p| PartSummary {
                        id: Ref::new(parts[p].id),
                        name: parts[p].name.clone(),
                    })
                    .collect(),
            }
        })
        .collect()
}

async fn seed(bench: &Bench) -> odm::Result<(Vec<Part>, Duration, Duration)> {
    let parts: Vec<Part> = (0..PARTS)
        .map(|i| Part {
            id: ObjectId::new(),
            partno: format!("{i:05}"),
            name: format!("#{i} grommet"),
            qty: 1,
        })
        .collect();
    bench.odm.insert_many(&parts).await?;
    bench.odm.sync_indexes_of::<Product>().await?;
    let mut rng = Lcg(7);
    // Half the products through odm (summaries filled from the parts), half by hand (the same
    // documents, already filled): insert throughput of both.
    let mut odm_time = Duration::ZERO;
    let mut hand_time = Duration::ZERO;
    let raw = bench.db.collection::<Document>("products");
    for start in (0..PRODUCTS).step_by(BATCH) {
        let batch = products(&parts, &mut rng, start, start + BATCH);
        if (start / BATCH).is_multiple_of(2) {
            let t = Instant::now();
            bench.odm.insert_many(&batch).await?;
            odm_time += t.elapsed();
        } else {
            let t = Instant::now();
            let docs: Vec<Document> = batch
                .iter()
                .map(|p| odm::bson::serialize_to_document(p).expect("encodes"))
                .collect();
            raw.insert_many(docs).await?;
            hand_time += t.elapsed();
        }
    }
    Ok((parts, odm_time, hand_time))
}

async fn odm_rename(
    bench: &Bench,
    part: ObjectId,
    name: &str,
    mode: TransactionMode,
) -> odm::Result<()> {
    bench
        .odm
        .update_by_id::<Part>(part, Part::name().set(name))
        .transaction(mode)
        .await?;
    Ok(())
}

async fn hand_rename(bench: &Bench, part: ObjectId, name: &str) -> odm::Result<()> {
    bench
        .db
        .collection::<Document>("parts")
        .update_one(doc! { "_id": part }, doc! { "$set": { "name": name } })
        .await?;
    let options = UpdateOptions::builder()
        .array_filters(vec![doc! { "e.id": part }])
        .build();
    bench
        .db
        .collection::<Document>("products")
        .update_many(
            doc! { "parts.id": part },
            doc! { "$set": { "parts.$[e].name": name } },
        )
        .with_options(options)
        .await?;
    Ok(())
}

async fn naive_rename(bench: &Bench, part: ObjectId, name: &str) -> odm::Result<()> {
    bench
        .db
        .collection::<Document>("parts")
        .update_one(doc! { "_id": part }, doc! { "$set": { "name": name } })
        .await?;
    let products = bench.db.collection::<Document>("products");
    let found: Vec<Document> = products
        .find(doc! { "parts.id": part })
        .await?
        .try_collect()
        .await?;
    for mut p in found {
        if let Ok(items) = p.get_array_mut("parts") {
            for item in items.iter_mut().filter_map(|i| i.as_document_mut()) {
                if item.get_object_id("id").ok() == Some(part) {
                    item.insert("name", name);
                }
            }
        }
        let id = p.get_object_id("_id").expect("id");
        products.replace_one(doc! { "_id": id }, p).await?;
    }
    Ok(())
}

async fn check(bench: &Bench, part: ObjectId, name: &str) -> odm::Result<()> {
    let stale = bench
        .db
        .collection::<Document>("products")
        .count_documents(
            doc! { "parts": { "$elemMatch": { "id": part, "name": { "$ne": name } } } },
        )
        .await?;
    assert_eq!(stale, 0, "every copy renamed");
    Ok(())
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("cascade").await?;
    let (parts, odm_insert, hand_insert) = seed(&bench).await?;
    let target = parts[0].id;
    let runs = 9;
    let (mut a, mut a_txn, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut a_cmds, mut a_txn_cmds, mut b_cmds, mut c_cmds) = (vec![], vec![], vec![], vec![]);
    for run in 0..runs {
        let name = format!("a{run}");
        let (t, cmds, r) = bench
            .measure(|| odm_rename(&bench, target, &name, TransactionMode::Never))
            .await;
        r?;
        check(&bench, target, &name).await?;
        a.push(t);
        a_cmds = cmds;
        let name = format!("n{run}");
        let (t, cmds, r) = bench
            .measure(|| odm_rename(&bench, target, &name, TransactionMode::Auto))
            .await;
        r?;
        check(&bench, target, &name).await?;
        a_txn.push(t);
        a_txn_cmds = cmds;
        let name = format!("b{run}");
        let (t, cmds, r) = bench.measure(|| hand_rename(&bench, target, &name)).await;
        r?;
        check(&bench, target, &name).await?;
        b.push(t);
        b_cmds = cmds;
    }
    for run in 0..2 {
        let name = format!("c{run}");
        let (t, cmds, r) = bench.measure(|| naive_rename(&bench, target, &name)).await;
        r?;
        check(&bench, target, &name).await?;
        c.push(t);
        c_cmds = cmds;
    }
    let (a, a_txn, b, c) = (median(a), median(a_txn), median(b), median(c));
    println!();
    println!("rename a part copied into {PRODUCTS} products x {SUMMARIES} summaries; medians of {runs} runs ((c): 2)");
    println!(
        "  {:<40} {:>10}   commands: {}",
        "(a) odm update + cascade (default)",
        show(a),
        show_commands(&a_cmds)
    );
    println!(
        "  {:<40} {:>10}   commands: {}",
        "(a') odm, TransactionMode::Auto",
        show(a_txn),
        show_commands(&a_txn_cmds)
    );
    println!(
        "  {:<40} {:>10}   commands: {}",
        "(b) hand-written update + array filters",
        show(b),
        show_commands(&b_cmds)
    );
    println!(
        "  {:<40} {:>10}   commands: {}",
        "(c) read-modify-write of each product",
        show(c),
        show_commands(&c_cmds)
    );
    let r = |x: Duration, y: Duration| x.as_secs_f64() / y.as_secs_f64();
    println!(
        "  a/b = {:.3} (target <= 1.10)   a'/b = {:.3}   c/a = {:.0} (target >= 50)",
        r(a, b),
        r(a_txn, b),
        r(c, a)
    );
    let half = (PRODUCTS / 2) as f64;
    println!();
    println!("insert {PRODUCTS} products in batches of {BATCH} (half each way)");
    println!(
        "  odm (summaries filled: find, insert, re-read find)   {:>8.0} products/s",
        half / odm_insert.as_secs_f64()
    );
    println!(
        "  hand-written insert_many of the same documents      {:>8.0} products/s",
        half / hand_insert.as_secs_f64()
    );
    println!(
        "  odm/hand time = {:.3} (each `find` is an $in of the batch's distinct part ids)",
        r(odm_insert, hand_insert)
    );
    bench.finish().await
}
