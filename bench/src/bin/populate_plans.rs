//! Populate plans: the `$in` plan (one `find` per level) and the lookup plan (one `aggregate`
//! with nested `$lookup`s), each against the hand-written driver code that does the same, at 1,
//! 2 and 3 levels (products → parts → suppliers → regions) for a page of 100 products; then
//! the scale case, 10,000 products × 20 references, with the size of the largest command
//! against the server's limits (`hello`).
//!
//! `cargo xtask bench populate_plans` runs it (release build).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt;
use odm::bson::{doc, oid::ObjectId, Document};
use odm::populate::Plan;
use odm::prelude::*;
use odm_bench::{median, show, show_commands, Bench, Lcg};

const REGIONS: usize = 10;
const SUPPLIERS: usize = 200;
const PARTS: usize = 50_000;
const PRODUCTS: usize = 10_000;
const REFS: usize = 20;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "regions")]
struct Region {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "suppliers")]
struct Supplier {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[reference]
    region: Ref<Region>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i64,
    #[reference]
    supplier: Ref<Supplier>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    catalog_number: i64,
    #[reference(many, max = 200)]
    parts: Vec<Ref<Part>>,
}

async fn seed(bench: &Bench) -> odm::Result<()> {
    let mut rng = Lcg(42);
    let regions: Vec<Region> = (0..REGIONS)
        .map(|i| Region {
            id: ObjectId::new(),
            name: format!("region {i}"),
        })
        .collect();
    let suppliers: Vec<Supplier> = (0..SUPPLIERS)
        .map(|i| Supplier {
            id: ObjectId::new(),
            name: format!("supplier {i}"),
            region: Ref::new(regions[i % REGIONS].id),
        })
        .collect();
    let parts: Vec<Part> = (0..PARTS)
        .map(|i| Part {
            id: ObjectId::new(),
            partno: format!("{i:05}-aff-456"),
            name: format!("#{i} grommet"),
            qty: rng.below(100) as i64,
            supplier: Ref::new(suppliers[rng.below(SUPPLIERS as u64) as usize].id),
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
                catalog_number: i as i64,
                parts: picked.into_iter().map(|p| Ref::new(parts[p].id)).collect(),
            }
        })
        .collect();
    bench.odm.insert_many(&regions).await?;
    bench.odm.insert_many(&suppliers).await?;
    bench.odm.insert_many(&parts).await?;
    bench.odm.insert_many(&products).await?;
    Ok(())
}

/// The query with a populate of `levels` levels.
fn with_levels(find: odm::ops::Find<'_, Product>, levels: usize) -> odm::ops::Find<'_, Product> {
    match levels {
        1 => find.populate(Product::parts()),
        2 => find.populate(Product::parts().populate().then(Part::supplier())),
        _ => find.populate(
            Product::parts()
                .populate()
                .then(Part::supplier().populate().then(Supplier::region())),
        ),
    }
}

/// Loaded references at every level, to check that every way did the whole job.
fn count_odm(products: &[Product], levels: usize) -> usize {
    let mut n = 0;
    for p in products {
        for part in p.parts.iter().filter_map(Ref::get) {
            n += 1;
            if levels >= 2 {
                if let Some(s) = part.supplier.get() {
                    n += 1;
                    if levels >= 3 && s.region.is_loaded() {
                        n += 1;
                    }
                }
            }
        }
    }
    n
}

async fn odm_populate(bench: &Bench, n: i64, levels: usize, plan: Plan) -> odm::Result<usize> {
    let find = bench
        .odm
        .find(Product::catalog_number().lt(n))
        .limit(n as u64)
        .populate_plan(plan);
    let products = with_levels(find, levels).await?;
    Ok(count_odm(&products, levels))
}

#[derive(Deserialize)]
struct RawProduct {
    parts: Vec<ObjectId>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct RawPart {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i64,
    supplier: ObjectId,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct RawLinked {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[serde(default)]
    region: Option<ObjectId>,
}

/// `{_id: {$in: ids}}` on `collection`, by id.
async fn by_ids<T: serde::de::DeserializeOwned + Send + Sync>(
    bench: &Bench,
    collection: &str,
    ids: HashSet<ObjectId>,
    id: fn(&T) -> ObjectId,
) -> odm::Result<HashMap<ObjectId, Arc<T>>> {
    let ids: Vec<ObjectId> = ids.into_iter().collect();
    Ok(bench
        .db
        .collection::<T>(collection)
        .find(doc! { "_id": { "$in": ids } })
        .await?
        .try_collect::<Vec<T>>()
        .await?
        .into_iter()
        .map(|d| (id(&d), Arc::new(d)))
        .collect())
}

/// The seed's join by hand: one `find` per level with the distinct ids, then stitched.
async fn hand_in(bench: &Bench, n: i64, levels: usize) -> odm::Result<usize> {
    let products: Vec<RawProduct> = bench
        .db
        .collection::<RawProduct>("products")
        .find(doc! { "catalog_number": { "$lt": n } })
        .limit(n)
        .await?
        .try_collect()
        .await?;
    let ids = products
        .iter()
        .flat_map(|p| p.parts.iter().copied())
        .collect();
    let parts = by_ids::<RawPart>(bench, "parts", ids, |p| p.id).await?;
    let suppliers = if levels >= 2 {
        let ids = parts.values().map(|p| p.supplier).collect();
        by_ids::<RawLinked>(bench, "suppliers", ids, |s| s.id).await?
    } else {
        HashMap::new()
    };
    let regions = if levels >= 3 {
        let ids = suppliers.values().filter_map(|s| s.region).collect();
        by_ids::<RawLinked>(bench, "regions", ids, |s| s.id).await?
    } else {
        HashMap::new()
    };
    let mut loaded = 0;
    for p in &products {
        for part in p.parts.iter().filter_map(|id| parts.get(id)) {
            loaded += 1;
            if let Some(s) = suppliers.get(&part.supplier) {
                loaded += 1;
                loaded += usize::from(s.region.is_some_and(|r| regions.contains_key(&r)));
            }
        }
    }
    Ok(loaded)
}

#[derive(Deserialize)]
struct LProduct {
    looked: Vec<LPart>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct LPart {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i64,
    #[serde(default)]
    looked: Vec<LSupplier>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct LSupplier {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[serde(default)]
    looked: Vec<RawLinked>,
}

/// The same by hand with one `aggregate`: nested `$lookup`s, decoded as nested vectors.
async fn hand_lookup(bench: &Bench, n: i64, levels: usize) -> odm::Result<usize> {
    // Without a sub-pipeline when there is nothing to nest: the server's fast path.
    let lookup = |from: &str, local: &str, inner: Vec<Document>| {
        let mut stage = doc! { "from": from, "localField": local, "foreignField": "_id" };
        if !inner.is_empty() {
            stage.insert("pipeline", inner);
        }
        stage.insert("as", "looked");
        doc! { "$lookup": stage }
    };
    let mut parts_pipeline = Vec::new();
    if levels >= 2 {
        let mut suppliers_pipeline = Vec::new();
        if levels >= 3 {
            suppliers_pipeline.push(lookup("regions", "region", Vec::new()));
        }
        parts_pipeline.push(lookup("suppliers", "supplier", suppliers_pipeline));
    }
    let pipeline = vec![
        doc! { "$match": { "catalog_number": { "$lt": n } } },
        doc! { "$limit": n },
        lookup("parts", "parts", parts_pipeline),
    ];
    let products: Vec<LProduct> = bench
        .db
        .collection::<Document>("products")
        .aggregate(pipeline)
        .with_type::<LProduct>()
        .await?
        .try_collect()
        .await?;
    Ok(products
        .iter()
        .flat_map(|p| &p.looked)
        .map(|part| {
            1 + part
                .looked
                .iter()
                .map(|s| 1 + s.looked.len())
                .sum::<usize>()
        })
        .sum())
}

struct Way {
    name: &'static str,
    samples: Vec<Duration>,
    commands: Vec<String>,
}

impl Way {
    fn new(name: &'static str) -> Self {
        Way {
            name,
            samples: Vec::new(),
            commands: Vec::new(),
        }
    }
}

async fn scenario(bench: &Bench, n: i64, levels: usize, runs: usize) -> odm::Result<()> {
    let mut ways = [
        Way::new("odm, $in plan"),
        Way::new("hand-written $in"),
        Way::new("odm, lookup plan"),
        Way::new("hand-written $lookup"),
    ];
    let expected = odm_populate(bench, n, levels, Plan::In).await?;
    for round in 0..=runs {
        // The order alternates, so that neither way always runs on a warmer server.
        for k in 0..ways.len() {
            let i = if round % 2 == 0 {
                k
            } else {
                ways.len() - 1 - k
            };
            let (t, cmds, loaded) = match i {
                0 => {
                    bench
                        .measure(|| odm_populate(bench, n, levels, Plan::In))
                        .await
                }
                1 => bench.measure(|| hand_in(bench, n, levels)).await,
                2 => {
                    bench
                        .measure(|| odm_populate(bench, n, levels, Plan::Lookup))
                        .await
                }
                _ => bench.measure(|| hand_lookup(bench, n, levels)).await,
            };
            assert_eq!(loaded?, expected, "{}", ways[i].name);
            // Round 0 warms up.
            if round > 0 {
                ways[i].samples.push(t);
                ways[i].commands = cmds;
            }
        }
    }
    println!();
    println!(
        "populate {n} products x {REFS} references, {levels} level(s) ({expected} documents loaded); medians of {runs} runs"
    );
    let medians: Vec<f64> = ways
        .iter()
        .map(|w| median(w.samples.clone()).as_secs_f64())
        .collect();
    for (w, m) in ways.iter().zip(&medians) {
        println!(
            "  {:<22} {:>10}   commands: {}",
            w.name,
            show(Duration::from_secs_f64(*m)),
            show_commands(&w.commands)
        );
    }
    println!(
        "  odm/hand: $in {:.3}, lookup {:.3} (target <= 1.05)    lookup/$in (odm): {:.2}",
        medians[0] / medians[1],
        medians[2] / medians[3],
        medians[2] / medians[0]
    );
    Ok(())
}

/// The largest command the `$in` plan sends for all the products, against the limits the
/// server states in `hello`.
async fn command_sizes(bench: &Bench) -> odm::Result<()> {
    let hello = bench.db.run_command(doc! { "hello": 1 }).await?;
    let max_bson = hello
        .get_i32("maxBsonObjectSize")
        .unwrap_or(16 * 1024 * 1024) as usize;
    let max_message = hello.get_i32("maxMessageSizeBytes").unwrap_or(48_000_000) as usize;
    let uri = odm::testing::test_uri()?;
    let mut options = odm::mongodb::options::ClientOptions::parse(&uri).await?;
    let log = odm::monitor::CommandLog::with_documents();
    log.attach(&mut options);
    let client = odm::mongodb::Client::with_options(options)?;
    let odm = Odm::new(client.database(bench.db.name()));
    for plan in [Plan::In, Plan::Lookup] {
        let products = odm
            .find::<Product>(Filter::all())
            .populate(Product::parts())
            .populate_plan(plan)
            .await?;
        assert_eq!(count_odm(&products, 1), PRODUCTS * REFS);
        let sent = log.take();
        let largest = sent
            .iter()
            .filter_map(|c| c.command.as_ref())
            .map(|d| odm::bson::serialize_to_vec(d).map_or(0, |v| v.len()))
            .max()
            .unwrap_or(0);
        let in_ids = sent
            .iter()
            .filter_map(|c| c.command.as_ref()?.get_document("filter").ok())
            .filter_map(|f| f.get_document("_id").ok()?.get_array("$in").ok())
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        println!(
            "  {plan:?}: {} commands, largest {largest} bytes (maxBsonObjectSize {max_bson}, maxMessageSizeBytes {max_message}); largest $in list: {in_ids} ids",
            sent.len()
        );
        assert!(largest <= max_bson && largest <= max_message);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("populate_plans").await?;
    seed(&bench).await?;
    for levels in 1..=3 {
        scenario(&bench, 100, levels, 21).await?;
    }
    scenario(&bench, PRODUCTS as i64, 1, 7).await?;
    println!();
    println!("commands of {PRODUCTS} x {REFS}, against the server's limits:");
    command_sizes(&bench).await?;
    bench.finish().await
}
