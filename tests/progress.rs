//! Progress of long work (`Odm::with_progress`): what a sweep, a repair, a sync, the
//! migrations, a cascade and the cascade worker report, checked against what they did (read
//! back with the raw driver), and what the reporting sends: one `count` per swept collection with
//! an observer, nothing without one.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::sent;
use odm::bson::{doc, Document};
use odm::prelude::*;
use odm::progress::{Observer, Progress, Task, Unit};

mod models {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "pg_parts")]
    pub struct Part {
        #[serde(rename = "_id")]
        pub id: i64,
        pub name: String,
    }

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct PartSummary {
        pub id: Ref<Part>,
        pub name: String,
    }

    /// Copies cascaded in the request.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "pg_products")]
    pub struct Product {
        #[serde(rename = "_id")]
        pub id: i64,
        #[index]
        pub name: String,
        #[denormalize(from = "Part", fields = "name", max = 50)]
        pub parts: Vec<PartSummary>,
    }

    /// Copies cascaded by the background worker.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "pg_shelves")]
    pub struct Shelf {
        #[serde(rename = "_id")]
        pub id: i64,
        #[denormalize(from = "Part", fields = "name", max = 50, cascade = "background")]
        pub parts: Vec<PartSummary>,
    }
}

use models::{Part, PartSummary, Product, Shelf};

/// An observer keeping every report, reporting after every batch.
fn recorder() -> (Observer, Arc<Mutex<Vec<Progress>>>) {
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let kept = Arc::clone(&seen);
    let observer = Observer::new(move |p| kept.lock().unwrap().push(p.clone()));
    (observer.every(Duration::ZERO), seen)
}

fn reports_of(seen: &Mutex<Vec<Progress>>, task: Task, phase: &str) -> Vec<Progress> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|p| p.task == task && p.phase == phase)
        .cloned()
        .collect()
}

fn summary(part: &Part) -> PartSummary {
    PartSummary {
        id: Ref::new(part.id),
        name: part.name.clone(),
    }
}

/// 5 parts, `n` products holding parts 0 and 1, 3 shelves holding part 0.
async fn seed(db: &odm::testing::TestDb, n: i64) -> odm::Result<Vec<Part>> {
    let parts: Vec<Part> = (0..5)
        .map(|i| Part {
            id: i,
            name: format!("grommet {i}"),
        })
        .collect();
    db.odm().insert_many(&parts).await?;
    let products: Vec<Product> = (0..n)
        .map(|i| Product {
            id: i,
            name: format!("smoke shifter {i}"),
            parts: vec![summary(&parts[0]), summary(&parts[1])],
        })
        .collect();
    db.odm().insert_many(&products).await?;
    let shelves: Vec<Shelf> = (0..3)
        .map(|i| Shelf {
            id: i,
            parts: vec![summary(&parts[0])],
        })
        .collect();
    db.odm().insert_many(&shelves).await?;
    Ok(parts)
}

#[tokio::test]
async fn a_sweep_reports_each_batch_against_its_total() -> odm::Result<()> {
    let db = common::db().await?;
    seed(&db, 25).await?;
    let (observer, seen) = recorder();
    let odm = db.odm().clone().with_progress(observer);

    let report = odm.verify_copies().batch_size(10).await?;
    assert!(report.is_consistent(), "{report}");

    let products = reports_of(&seen, Task::Verify, "copies pg_products.parts");
    let done: Vec<(u64, Option<u64>, bool)> = products
        .iter()
        .map(|p| (p.done, p.total, p.finished))
        .collect();
    // Its start, a report per batch of 10, and its end; the total counted beforehand.
    assert_eq!(
        done,
        vec![
            (0, Some(25), false),
            (10, Some(25), false),
            (20, Some(25), false),
            (25, Some(25), false),
            (25, Some(25), true),
        ]
    );
    assert!(products.iter().all(|p| p.unit == Unit::Documents));
    let last = products.last().unwrap();
    assert_eq!(last.fraction(), Some(1.0));
    assert!(last
        .to_string()
        .starts_with("verify copies pg_products.parts: 25/25 documents"));
    // The shelves are swept too, each piece ending with a finished report.
    let shelves = reports_of(&seen, Task::Verify, "copies pg_shelves.parts");
    assert_eq!(
        shelves.last().map(|p| (p.done, p.finished)),
        Some((3, true))
    );
    Ok(())
}

#[tokio::test]
async fn reporting_costs_one_count_per_swept_collection_and_nothing_without_an_observer(
) -> odm::Result<()> {
    let db = common::db().await?;
    seed(&db, 12).await?;
    assert!(db.odm().progress().is_none());
    db.commands().clear();
    db.odm().verify_copies().batch_size(5).await?;
    let without = sent(&db);

    let (observer, seen) = recorder();
    let odm = db.odm().clone().with_progress(observer);
    odm.verify_copies().batch_size(5).await?;
    let with = sent(&db);

    let swept = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|p| p.unit == Unit::Documents && p.finished)
        .count();
    assert_eq!(swept, 2, "two copies swept: products' and shelves'");
    // The collections are read whole: their counts come from their metadata (`count`).
    let counts = |log: &[String]| log.iter().filter(|c| *c == "count").count();
    assert_eq!((counts(&without), counts(&with)), (0, swept), "{with:?}");
    assert_eq!(with.len(), without.len() + swept, "{without:?} vs {with:?}");
    Ok(())
}

#[tokio::test]
async fn a_repair_reports_as_a_repair_and_repairs() -> odm::Result<()> {
    let db = common::db().await?;
    seed(&db, 4).await?;
    db.raw()
        .collection::<Document>("pg_products")
        .update_many(doc! {}, doc! { "$set": { "parts.0.name": "stale" } })
        .await?;
    let (observer, seen) = recorder();
    let odm = db.odm().clone().with_progress(observer);
    let report = odm.verify_copies().repair(true).await?;
    assert_eq!(report.repairs, 4, "{report}");
    let repair = reports_of(&seen, Task::Repair, "copies pg_products.parts");
    assert_eq!(repair.last().map(|p| (p.done, p.finished)), Some((4, true)));
    assert!(reports_of(&seen, Task::Verify, "copies pg_products.parts").is_empty());
    for raw in common::stored(&db, "pg_products").await {
        let first = raw.get_array("parts").unwrap()[0].as_document().unwrap();
        assert_eq!(first.get_str("name").unwrap(), "grommet 0");
    }
    Ok(())
}

#[tokio::test]
async fn a_cascade_and_the_worker_report_the_copies_they_write() -> odm::Result<()> {
    let db = common::db().await?;
    seed(&db, 6).await?;
    let (observer, seen) = recorder();
    let odm = db.odm().clone().with_progress(observer);

    odm.update_one(Part::id().eq(0), Part::name().set("Bolt M6".to_owned()))
        .await?;
    let cascade: Vec<Progress> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|p| p.task == Task::Cascade)
        .cloned()
        .collect();
    // One source, one copy cascaded in the request (the shelves' is the worker's).
    let last = cascade.last().expect("the cascade reported");
    assert_eq!((last.done, last.total, last.finished), (1, Some(1), true));
    assert_eq!(last.unit, Unit::Sources);
    assert_eq!(last.phase, "pg_parts into pg_products.parts");
    for raw in common::stored(&db, "pg_products").await {
        let first = raw.get_array("parts").unwrap()[0].as_document().unwrap();
        assert_eq!(first.get_str("name").unwrap(), "Bolt M6");
    }

    let worked = odm.cascade_worker().run_until_idle().await?;
    assert_eq!(worked.applied, 1);
    let worker = reports_of(&seen, Task::Worker, "cascade intents");
    assert_eq!(worker.first().map(|p| (p.done, p.total)), Some((0, None)));
    assert_eq!(worker.last().map(|p| (p.done, p.finished)), Some((1, true)));
    for raw in common::stored(&db, "pg_shelves").await {
        let first = raw.get_array("parts").unwrap()[0].as_document().unwrap();
        assert_eq!(first.get_str("name").unwrap(), "Bolt M6");
    }
    Ok(())
}

#[tokio::test]
async fn a_sync_and_the_migrations_report_their_steps() -> odm::Result<()> {
    let db = common::db().await?;
    let (observer, seen) = recorder();
    let odm = db.odm().clone().with_progress(observer);

    odm.sync_indexes().await?;
    let sync = reports_of(&seen, Task::Sync, "indexes");
    let last = sync.last().expect("the sync reported");
    assert_eq!((last.done, last.total, last.finished), (3, Some(3), true));
    assert_eq!(last.unit, Unit::Collections);
    let names = db
        .raw()
        .collection::<Document>("pg_products")
        .list_index_names()
        .await?;
    assert!(names.iter().any(|n| n.starts_with("name")), "{names:?}");

    odm.migrations()
        .add(1, "rename", |odm: Odm| async move {
            odm.update_many(
                Product::id().gte(0),
                Product::name().set("renamed".to_owned()),
            )
            .await?;
            Ok(())
        })
        .add(2, "nothing", |_| async { Ok(()) })
        .await?;
    let all = reports_of(&seen, Task::Migrate, "migrations");
    assert_eq!(
        all.iter().map(|p| (p.done, p.finished)).collect::<Vec<_>>(),
        vec![(0, false), (1, false), (2, false), (2, true)]
    );
    let first = reports_of(&seen, Task::Migrate, "migration 1 rename");
    assert_eq!(first.last().map(|p| (p.done, p.finished)), Some((1, true)));
    Ok(())
}

#[tokio::test]
async fn the_follower_reports_the_events_it_applies() -> odm::Result<()> {
    let db = common::db().await?;
    seed(&db, 3).await?;
    let (observer, seen) = recorder();
    let odm = db.odm().clone().with_progress(observer);
    // Idle after two quiet seconds: on a busy machine the stream may take longer than a
    // moment to deliver writes made before the run.
    let mut follower = odm.follower().max_wait(Duration::from_secs(2));
    follower.run_until_idle().await?; // from the present on
                                      // Another program renames two parts.
    let raw = db.raw().collection::<Document>("pg_parts");
    raw.update_one(doc! { "_id": 0 }, doc! { "$set": { "name": "Bolt M6" } })
        .await?;
    raw.update_one(doc! { "_id": 1 }, doc! { "$set": { "name": "Bolt M8" } })
        .await?;
    seen.lock().unwrap().clear();
    let report = follower.run_until_idle().await?;
    follower.stop().await?;
    assert_eq!(report.events, 2, "{report:?}");
    let follow = reports_of(&seen, Task::Follow, "other programs' writes");
    let last = follow.last().expect("the follower reported");
    assert_eq!((last.done, last.total, last.finished), (2, None, true));
    assert_eq!(last.unit, Unit::Events);
    for raw in common::stored(&db, "pg_products").await {
        let names: Vec<&str> = raw
            .get_array("parts")
            .unwrap()
            .iter()
            .map(|s| s.as_document().unwrap().get_str("name").unwrap())
            .collect();
        assert_eq!(names, ["Bolt M6", "Bolt M8"]);
    }
    Ok(())
}
