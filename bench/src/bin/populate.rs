//! Populate: 1,000 products x 20 part references (drawn from 2,000 parts), three ways, in one
//! run on one server: (a) odm populate, (b) the seed's hand-written application-level join
//! (`find` products, collect ids, `find({_id: {$in: ids}})`, stitch), (c) one `find_one` per
//! reference. Then the same at 100 products, where per-call overhead shows most.
//!
//! `cargo xtask bench` runs it (release build).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt;
use odm::bson::{doc, oid::ObjectId};
use odm::prelude::*;
use odm_bench::{median, show, show_commands, Bench, Lcg};

const PARTS: usize = 2_000;
const PRODUCTS: usize = 1_000;
const REFS: usize = 20;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i64,
    cost: f64,
    price: f64,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    manufacturer: String,
    catalog_number: i64,
    #[reference(many, max = 200)]
    parts: Vec<Ref<Part>>,
}

/// What hand-written code decodes: the same fields, ids as plain `ObjectId`s.
#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct RawProduct {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    manufacturer: String,
    catalog_number: i64,
    parts: Vec<ObjectId>,
}

#[derive(Deserialize, Debug, Clone)]
#[allow(dead_code)]
struct RawPart {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i64,
    cost: f64,
    price: f64,
}

async fn seed(bench: &Bench) -> odm::Result<()> {
    let mut rng = Lcg(42);
    let parts: Vec<Part> = (0..PARTS)
        .map(|i| Part {
            id: ObjectId::new(),
            partno: format!("{i:05}-aff-456"),
            name: format!("#{i} grommet"),
            qty: rng.below(100) as i64,
            cost: 0.94,
            price: 3.99,
        })
        .collect();
    let products: Vec<Product> = (0..PRODUCTS)
        .map(|i| {
            let mut picked = HashSet::new();
            while picked.len() < REFS {
                picked.insert(rng.below(PARTS as u64) as usize);
            }
            Product {
                id: ObjectId::new(),
                name: format!("left-handed smoke shifter {i}"),
                manufacturer: "Acme Corp".into(),
                catalog_number: i as i64,
                parts: picked.into_iter().map(|p| Ref::new(parts[p].id)).collect(),
            }
        })
        .collect();
    bench.odm.insert_many(&parts).await?;
    bench.odm.insert_many(&products).await?;
    Ok(())
}

/// (a) odm.
async fn odm_populate(bench: &Bench, n: i64) -> odm::Result<usize> {
    let products = bench
        .odm
        .find(Product::catalog_number().lt(n))
        .populate(Product::parts())
        .await?;
    Ok(products
        .iter()
        .map(|p| p.parts.iter().filter(|r| r.is_loaded()).count())
        .sum())
}

/// (b) The seed's join, written by hand with the driver.
async fn hand_written(bench: &Bench, n: i64) -> odm::Result<usize> {
    let products: Vec<RawProduct> = bench
        .db
        .collection::<RawProduct>("products")
        .find(doc! { "catalog_number": { "$lt": n } })
        .await?
        .try_collect()
        .await?;
    let ids: Vec<ObjectId> = products
        .iter()
        .flat_map(|p| p.parts.iter().copied())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let parts: HashMap<ObjectId, Arc<RawPart>> = bench
        .db
        .collection::<RawPart>("parts")
        .find(doc! { "_id": { "$in": ids } })
        .await?
        .try_collect::<Vec<_>>()
        .await?
        .into_iter()
        .map(|p| (p.id, Arc::new(p)))
        .collect();
    let joined: Vec<(RawProduct, Vec<Arc<RawPart>>)> = products
        .into_iter()
        .map(|p| {
            let loaded = p
                .parts
                .iter()
                .filter_map(|id| parts.get(id).cloned())
                .collect();
            (p, loaded)
        })
        .collect();
    Ok(joined.iter().map(|(_, parts)| parts.len()).sum())
}

/// (c) One `find_one` per reference.
async fn naive(bench: &Bench, n: i64) -> odm::Result<usize> {
    let products: Vec<RawProduct> = bench
        .db
        .collection::<RawProduct>("products")
        .find(doc! { "catalog_number": { "$lt": n } })
        .await?
        .try_collect()
        .await?;
    let parts = bench.db.collection::<RawPart>("parts");
    let mut loaded = 0;
    for p in &products {
        for id in &p.parts {
            if parts.find_one(doc! { "_id": id }).await?.is_some() {
                loaded += 1;
            }
        }
    }
    Ok(loaded)
}

struct Row {
    median: Duration,
    commands: Vec<String>,
}

async fn scenario(bench: &Bench, n: i64, runs: usize, naive_runs: usize) -> odm::Result<()> {
    let expected = n as usize * REFS;
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut a_cmds = Vec::new();
    let mut b_cmds = Vec::new();
    // Warm up both, then interleave so that both see the same server state.
    odm_populate(bench, n).await?;
    hand_written(bench, n).await?;
    for _ in 0..runs {
        let (t, cmds, loaded) = bench.measure(|| odm_populate(bench, n)).await;
        assert_eq!(loaded?, expected);
        a.push(t);
        a_cmds = cmds;
        let (t, cmds, loaded) = bench.measure(|| hand_written(bench, n)).await;
        assert_eq!(loaded?, expected);
        b.push(t);
        b_cmds = cmds;
    }
    let mut c = Vec::new();
    let mut c_cmds = Vec::new();
    for _ in 0..naive_runs {
        let (t, cmds, loaded) = bench.measure(|| naive(bench, n)).await;
        assert_eq!(loaded?, expected);
        c.push(t);
        c_cmds = cmds;
    }
    let rows = [
        (
            "(a) odm populate",
            Row {
                median: median(a),
                commands: a_cmds,
            },
        ),
        (
            "(b) hand-written $in join",
            Row {
                median: median(b),
                commands: b_cmds,
            },
        ),
        (
            "(c) find_one per reference",
            Row {
                median: median(c),
                commands: c_cmds,
            },
        ),
    ];
    println!();
    println!("populate {n} products x {REFS} references ({PARTS} distinct parts); medians of {runs} runs ((c): {naive_runs})");
    for (name, row) in &rows {
        println!(
            "  {name:<28} {:>10}   commands: {}",
            show(row.median),
            show_commands(&row.commands)
        );
    }
    let a_b = rows[0].1.median.as_secs_f64() / rows[1].1.median.as_secs_f64();
    let c_a = rows[2].1.median.as_secs_f64() / rows[0].1.median.as_secs_f64();
    println!("  a/b = {a_b:.3} (target <= 1.05)    c/a = {c_a:.0} (target >= 20)");
    Ok(())
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("populate").await?;
    seed(&bench).await?;
    scenario(&bench, PRODUCTS as i64, 21, 3).await?;
    scenario(&bench, 100, 41, 5).await?;
    bench.finish().await
}
