//! Seed 004's sharding, on seed 001's parts catalog and host logs: products sharded by
//! `category`, log messages by `{host, time}`, hosts by `_id`, log events by a field of their
//! embedded `source`, and seed 004's exercise 8 (the uploaded images, sharded by the month of
//! the upload then the MD5 of the data, a key the ODM computes). Each step prints what it did
//! and the commands it sent: the key's index and what `sync_indexes` does about sharding, the
//! filters of saves and deletes naming the key, an upsert without the key refused before
//! anything is sent, a cascade that must scatter, and the routing report of every model.
//!
//! Run it with `cargo run -p odm-examples --example catalog_shards`: it uses `MONGODB_URI`
//! when set (against a `mongos`, the collections are really sharded), else starts the local
//! development server (a replica set: nothing is sharded, the commands are the same).

#[path = "common/mod.rs"]
mod common;

use common::{say, say_lines};
use odm::bson::{spec::BinarySubtype, Binary, DateTime, Document};
use odm::prelude::*;
use odm::shard::RoutingReport;
use odm::Error;

#[path = "catalog_shards/models.rs"]
mod models;

use models::{Event, Host, Image, LogMsg, Part, PartSummary, Product, Source};

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn at(day: i64, minute: i64) -> DateTime {
    // 2024-05-01T00:00:00Z, plus days and minutes.
    DateTime::from_millis(1_714_521_600_000 + day * 86_400_000 + minute * 60_000)
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("catalog_shards").await?;
    let raw = |c: &str| odm.database().collection::<Document>(c);

    steps.start("Sync: the keys' indexes, then shardCollection on a mongos only");
    // ANCHOR: sync
    let report = odm.sync_indexes().await?;
    // ANCHOR_END: sync
    say_lines(&report);
    steps.sent();

    steps.start("Insert the seed's parts and two products of the `smoke` category");
    let grommet = Part {
        id: 1,
        partno: "123-aff-456".into(),
        name: "#4 grommet".into(),
    };
    let fan = Part {
        id: 2,
        partno: "456-bcd-789".into(),
        name: "fan blade assembly".into(),
    };
    odm.insert_many([&grommet, &fan]).await?;
    let summary = |p: &Part| PartSummary {
        id: Ref::new(p.id),
        name: String::new(),
    };
    let shifter = Product {
        id: 1234,
        category: "smoke".into(),
        name: "left-handed smoke shifter".into(),
        catalog_number: 1234,
        parts: vec![summary(&grommet), summary(&fan)],
    };
    let detector = Product {
        id: 1236,
        category: "smoke".into(),
        name: "smoke detector".into(),
        catalog_number: 1236,
        parts: vec![summary(&fan)],
    };
    odm.insert_many([&shifter, &detector]).await?;
    steps.sent();

    steps.start("Save a loaded product: the replacement's filter names `_id` and `category`");
    // ANCHOR: save
    let mut loaded = odm.get::<Product>(1234).await?.expect("inserted");
    loaded.name = "left-handed smoke shifter, mk II".into();
    odm.replace_one(&loaded).await?;
    // ANCHOR_END: save
    steps.sent();

    steps.start("An upsert that does not name `category`: refused, nothing sent");
    // ANCHOR: upsert
    let refused = odm
        .update_one(
            Product::name().eq("right-handed smoke shifter"),
            Product::catalog_number().set(1235),
        )
        .upsert(true)
        .await;
    // ANCHOR_END: upsert
    match refused {
        Err(e @ Error::ShardKeyMissing { .. }) => say(e),
        other => panic!("expected ShardKeyMissing, got {other:?}"),
    }
    steps.sent();

    steps.start("Rename a part: the cascade finds the products by `parts.id`, not by category");
    odm.update_by_id::<Part>(2, Part::name().set("fan blade assembly, rev B".to_owned()))
        .await?;
    steps.sent();

    steps.start("The cascade plan of Part: the update into products scatters");
    say_lines(odm::denormalize::cascade_plan::<Part>());
    steps.sent();

    steps.start("Insert a host and a message: the push onto the host is routed by `_id`");
    odm.insert_one(&Host {
        id: 1,
        name: "goofy.example.com".into(),
        logmsgs: vec![],
    })
    .await?;
    odm.insert_one(&LogMsg {
        id: 1,
        host: Ref::new(1),
        time: at(0, 1),
        message: "cpu is on fire!".into(),
    })
    .await?;
    steps.sent();

    steps.start("A key inside an embedded document: a saved event names `source.host` and `at`");
    odm.insert_one(&Event {
        id: 1,
        source: Source {
            host: "goofy.example.com".into(),
            application: "api".into(),
        },
        at: at(0, 2),
        message: "disk is full".into(),
    })
    .await?;
    // ANCHOR: dotted_save
    let mut event = odm.get::<Event>(1).await?.expect("inserted");
    event.message = "disk is full again".into();
    odm.replace_one(&event).await?;
    // ANCHOR_END: dotted_save
    steps.sent();

    steps.start("Upload an image: the ODM fills `segment` with the month and the data's MD5");
    let image = Image {
        id: 1,
        uploaded: at(5, 0),
        data: Binary {
            subtype: BinarySubtype::Generic,
            bytes: b"GIF89a".to_vec(),
        },
        segment: String::new(),
    };
    odm.insert_one(&image).await?;
    let stored = raw("images")
        .find_one(odm::bson::doc! { "_id": 1 })
        .await?
        .expect("inserted");
    let segment = stored.get_str("segment").unwrap_or_default().to_owned();
    say(format!("stored segment: {segment}"));
    assert!(segment.starts_with("2024-05-"));
    steps.sent();

    steps.start("Delete a loaded product: `_id` and `category` in the filter");
    // ANCHOR: delete
    let detector = odm.get::<Product>(1236).await?.expect("inserted");
    odm.delete_document(&detector).await?;
    // ANCHOR_END: delete
    steps.sent();

    steps.start("The routing report of each model: nothing is sent");
    // ANCHOR: report
    let reports = [
        RoutingReport::of::<Product>(),
        RoutingReport::of::<Part>(),
        RoutingReport::of::<Host>(),
        RoutingReport::of::<LogMsg>(),
    ];
    // ANCHOR_END: report
    for r in &reports {
        say_lines(r);
    }
    assert!(reports[0].to_string().contains(
        "cascade of Part.name into products.parts scatters: the filter lacks products' shard key `category`"
    ));
    steps.sent();

    let left = raw("products").count_documents(odm::bson::doc! {}).await?;
    assert_eq!(left, 1);
    common::drop_database(&odm).await
}
