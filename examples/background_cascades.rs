//! Seed 001's parts catalog with the part names copied into the products, cascaded in the
//! background (seeds 000/001: "eventual consistency within a bounded interval ... a background
//! process"): a rename records its intent in its own transaction and returns; a cascade worker
//! writes the copies batch after batch, resumes after a crash, never writes an older name over
//! a newer one, and reports how far behind it is. Every step prints what it did and the
//! commands it sent; ObjectIds are shown by the name of their document (`ObjectId(grommet)`).
//!
//! Run it with `cargo run -p odm-examples --example background_cascades`: it uses `MONGODB_URI`
//! when set, else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use std::time::Duration;

use common::{say, say_lines};
use odm::bson::{doc, Bson, Document};
use odm::denormalize::INTENTS;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

// ANCHOR: product
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    catalog_number: i64,
    /// The parts' names, copied by the cascade worker after each rename, not by the rename.
    #[denormalize(from = "Part", fields = "name", max = 200, cascade = "background")]
    parts: Vec<PartSummary>,
}
// ANCHOR_END: product

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The names of the grommet's summaries in the products, in catalog order.
async fn copies(odm: &Odm, grommet: ObjectId) -> odm::Result<Vec<String>> {
    let mut cursor = odm
        .database()
        .collection::<Document>("products")
        .find(doc! {})
        .sort(doc! { "catalog_number": 1 })
        .await?;
    let mut docs = Vec::new();
    while cursor.advance().await? {
        docs.push(cursor.deserialize_current()?);
    }
    Ok(docs
        .iter()
        .filter_map(|d| {
            d.get_array("parts").ok()?.iter().find_map(|s| {
                let s = s.as_document()?;
                (s.get("id") == Some(&Bson::ObjectId(grommet)))
                    .then(|| s.get_str("name").unwrap_or("?").to_owned())
            })
        })
        .collect())
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("background_cascades").await?;
    let intents = odm.database().collection::<Document>(INTENTS);

    steps.start(
        "Create the indexes: `parts.id` finds a part's summaries, `since` orders the intents",
    );
    say_lines(odm.sync_indexes().await?);
    odm.cascade_worker().create_index().await?;
    odm.supports_transactions().await?;
    steps.sent();

    steps.start("Insert the grommet and five products that use it: names copied on insert");
    let grommet = Part {
        id: ObjectId::new(),
        partno: "123-aff-456".into(),
        name: "#4 grommet".into(),
    };
    odm.insert_one(&grommet).await?;
    steps.name(grommet.id, "grommet");
    let products: Vec<Product> = (0..5)
        .map(|i| Product {
            id: ObjectId::new(),
            name: format!("smoke shifter {i}"),
            catalog_number: 1234 + i,
            parts: vec![PartSummary {
                id: Ref::new(grommet.id),
                name: String::new(),
            }],
        })
        .collect();
    odm.insert_many(&products).await?;
    for p in &products {
        steps.name(p.id, &format!("product_{}", p.catalog_number));
    }
    say(format_args!(
        "copies: {:?}",
        copies(&odm, grommet.id).await?
    ));
    steps.sent();

    steps.start("The cascade plan of a part: the intent in the rename, the copies by the worker");
    // ANCHOR: plan
    let plan = odm::denormalize::cascade_plan::<Part>();
    // ANCHOR_END: plan
    say_lines(plan);
    steps.sent();

    steps
        .start("Rename the grommet: the rename and its intent commit together; no copy is written");
    // ANCHOR: rename
    odm.update_by_id::<Part>(grommet.id, Part::name().set("#4 zinc grommet"))
        .await?;
    // ANCHOR_END: rename
    say(format_args!(
        "copies: {:?}",
        copies(&odm, grommet.id).await?
    ));
    steps.sent();

    steps.start("The intent as stored in `odm_cascades`");
    let stored = intents.find_one(doc! {}).await?.expect("recorded");
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("The status: one source behind, and since when");
    // ANCHOR: status
    let status = odm.cascade_status().await?;
    // ANCHOR_END: status
    say(format_args!(
        "pending {}, claimed {}, failing {}",
        status.pending, status.claimed, status.failing
    ));
    assert_eq!(status.pending, 1);
    steps.sent();

    steps.start("A worker writes one batch of two products, then dies (stopped between batches)");
    // ANCHOR: worker
    let mut worker = odm
        .cascade_worker()
        .batch_size(2)
        .lease(Duration::from_millis(300));
    let report = worker.run_batches(1).await?;
    // ANCHOR_END: worker
    say(format_args!(
        "batches {}, copies written {}",
        report.batches, report.written
    ));
    say(format_args!(
        "copies: {:?}",
        copies(&odm, grommet.id).await?
    ));
    drop(worker);
    // The worker's claim token, named in the commands below.
    let held = intents.find_one(doc! {}).await?.expect("still pending");
    if let Ok(token) = held.get_object_id("claim") {
        steps.name(token, "claim");
    }
    steps.sent();

    steps.start("Rename again while the cascade is half done: the same intent, `seq` 2");
    odm.update_by_id::<Part>(grommet.id, Part::name().set("#4 brass grommet"))
        .await?;
    let stored = intents.find_one(doc! {}).await?.expect("recorded");
    say(format_args!("seq {}", stored.get_i64("seq").unwrap_or(0)));
    steps.sent();

    steps.start("Another worker takes over once the dead one's lease expires, and finishes");
    tokio::time::sleep(Duration::from_millis(350)).await;
    // ANCHOR: run
    let report = odm.cascade_worker().batch_size(2).run_until_idle().await?;
    // ANCHOR_END: run
    say(format_args!(
        "applied {}, batches {}, copies written {}, lag under a second: {}",
        report.applied,
        report.batches,
        report.written,
        report.lag < Duration::from_secs(1)
    ));
    let now = copies(&odm, grommet.id).await?;
    say(format_args!("copies: {now:?}"));
    assert!(now.iter().all(|n| n == "#4 brass grommet"));
    assert_eq!(odm.cascade_status().await?.pending, 0);
    steps.sent();

    steps.start("An intent written behind the ODM's back is a typed error, kept for a retry");
    intents
        .insert_one(doc! { "_id": { "source": "parts", "id": grommet.id }, "seq": "two", "copies": ["products.parts"] })
        .await?;
    let report = odm.cascade_worker().run_until_idle().await?;
    for e in &report.failed {
        say(steps.named(e));
    }
    assert_eq!(report.failed.len(), 1);
    steps.sent();

    common::drop_database(&odm).await
}
