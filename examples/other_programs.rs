//! Seed 001's parts catalog written by two programs: this one through odm, and "another
//! program" (a plain driver client of its own, as a service in another language or an
//! administrator's shell would be) that renames and deletes parts behind odm's back. A follower
//! applies to those writes what odm applies to its own: the rename reaches every product's
//! copy, the delete takes the part's summaries out and sets the orders' references to null.
//! Every step prints what it did and the commands odm sent (the other program's are not
//! logged); ObjectIds are shown by the name of their document. Last, a follower started again
//! after the other program wrote a name no `String` holds resumes from its stored position and
//! reports that document instead of copying it.
//!
//! Run it with `cargo run -p odm-examples --example other_programs`: it uses `MONGODB_URI`
//! when set, else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use std::time::Duration;

use common::say;
use odm::bson::{doc, Document};
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

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[denormalize(from = "Part", fields = "name", max = 200)]
    parts: Vec<PartSummary>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[reference(on_delete = "nullify")]
    part: Option<Ref<Part>>,
    #[denormalize(from = "Part", via = "part", fields = "name")]
    #[serde(default)]
    part_name: String,
}

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The product's part names and the order's reference and name, as stored.
async fn show(odm: &Odm, steps: &common::Steps) -> odm::Result<()> {
    let db = odm.database();
    if let Some(p) = db
        .collection::<Document>("products")
        .find_one(doc! {})
        .await?
    {
        say(format_args!(
            "product: {}",
            steps.show(p.get("parts").unwrap_or(&odm::bson::Bson::Null))
        ));
    }
    if let Some(o) = db
        .collection::<Document>("orders")
        .find_one(doc! {})
        .await?
    {
        let mut o = o;
        o.remove("_id");
        say(format_args!(
            "order:   {}",
            steps.show(&odm::bson::Bson::Document(o))
        ));
    }
    Ok(())
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("other_programs").await?;

    steps.start("Insert two parts, a product listing both and an order of the grommet");
    let grommet = Part {
        id: ObjectId::new(),
        partno: "123-aff-456".into(),
        name: "#4 grommet".into(),
    };
    let washer = Part {
        id: ObjectId::new(),
        partno: "789-bbb-012".into(),
        name: "washer".into(),
    };
    odm.insert_one(&grommet).await?;
    odm.insert_one(&washer).await?;
    steps.name(grommet.id, "grommet");
    steps.name(washer.id, "washer");
    let product = Product {
        id: ObjectId::new(),
        name: "smoke shifter".into(),
        parts: vec![
            PartSummary {
                id: Ref::new(grommet.id),
                name: String::new(),
            },
            PartSummary {
                id: Ref::new(washer.id),
                name: String::new(),
            },
        ],
    };
    odm.insert_one(&product).await?;
    let order = Order {
        id: ObjectId::new(),
        part: Some(Ref::new(grommet.id)),
        part_name: String::new(),
    };
    odm.insert_one(&order).await?;
    show(&odm, &steps).await?;
    steps.sent();

    steps.start("Start the follower in a task of its own: it opens a change stream over `parts`");
    // ANCHOR: start
    let follower = odm
        .follower()
        .max_wait(Duration::from_millis(200))
        .lease(Duration::from_secs(1));
    let task = tokio::spawn(follower.run());
    // ANCHOR_END: start
    // Once it has stored its position, the other program's writes are its to follow.
    while !odm.follower_status().await?.started {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    steps.log().take();
    say("following");

    // ANCHOR: other
    // The other program: a driver client of its own, no odm.
    let other = odm::mongodb::Client::with_uri_str(odm::testing::test_uri()?).await?;
    common::shut_down_at_exit(&other);
    let parts = other
        .database(odm.database().name())
        .collection::<Document>("parts");
    parts
        .update_one(
            doc! { "_id": grommet.id },
            doc! { "$set": { "name": "#4 zinc grommet" } },
        )
        .await?;
    // ANCHOR_END: other
    steps.start("The other program renames the grommet; wait for the follower");
    odm.wait_for_follower(Duration::from_secs(10)).await?;
    show(&odm, &steps).await?;
    say("(odm's commands here are the follower's status checks; the cascade runs in its task)");
    steps.log().take();

    steps.start("The other program deletes the grommet; wait for the follower");
    parts.delete_one(doc! { "_id": grommet.id }).await?;
    odm.wait_for_follower(Duration::from_secs(10)).await?;
    show(&odm, &steps).await?;
    steps.log().take();

    steps.start("Where the follower stands");
    let status = odm.follower_status().await?;
    say(format_args!(
        "behind: {}, applied: {}",
        status.behind, status.applied
    ));
    steps.log().take();

    steps.start(
        "Stop the follower; the other program writes a name no `String` holds; a follower \
         started again resumes from the stored position",
    );
    task.abort();
    // The stopped follower's lease runs out (one second here), then the next one takes it.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    parts
        .update_one(doc! { "_id": washer.id }, doc! { "$set": { "name": 42 } })
        .await?;
    // ANCHOR: bad
    let report = odm.follower().run_until_idle().await?;
    for bad in &report.bad_documents {
        say(format_args!(
            "not applied: {} {} `{}`",
            bad.collection, bad.id, bad.path
        ));
    }
    // ANCHOR_END: bad
    say(format_args!(
        "events: {}, bad documents: {}, position rolled back: {}",
        report.events,
        report.bad_documents.len(),
        report.rolled_back
    ));
    show(&odm, &steps).await?;
    steps.log().take();
    common::drop_database(&odm).await?;
    Ok(())
}
