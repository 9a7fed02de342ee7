//! Durable background cascades (`cascade = "background"`): the source update records an intent
//! in its own transaction, a worker applies it in batches, resumably and idempotently, and the
//! lag is reported. Everything is read back with the raw driver; no test repairs anything.

mod common;

use std::time::{Duration, Instant};

use common::{sent, stored_one};
use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, Document};
use odm::denormalize::INTENTS;
use odm::prelude::*;
use odm::testing::TestDb;

mod models {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "bg_parts")]
    pub struct Part {
        #[serde(rename = "_id")]
        pub id: String,
        #[index(unique)]
        pub name: String,
    }

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct PartSummary {
        pub id: Ref<Part>,
        pub name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "bg_products")]
    pub struct Product {
        #[serde(rename = "_id")]
        pub id: i64,
        pub name: String,
        #[denormalize(from = "Part", fields = "name", max = 200, cascade = "background")]
        pub parts: Vec<PartSummary>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "bg_orders")]
    pub struct Order {
        #[serde(rename = "_id")]
        pub id: i64,
        #[reference]
        pub product: Ref<Product>,
        #[denormalize(
            from = "Product",
            via = "product",
            fields = "name",
            cascade = "background"
        )]
        pub product_name: String,
    }
}

use models::{Order, Part, Product};

/// `n` products holding a summary of `part` under `name`, inserted with the raw driver (the
/// fastest way to many dependents), `_id`s from `first`.
async fn products(db: &TestDb, part: &str, name: &str, first: i64, n: i64) {
    let docs: Vec<Document> = (first..first + n)
        .map(|i| {
            doc! {
                "_id": i,
                "name": format!("product {i}"),
                "parts": [{ "id": part, "name": name }, { "id": "other", "name": "other" }],
            }
        })
        .collect();
    for chunk in docs.chunks(10_000) {
        db.raw()
            .collection::<Document>("bg_products")
            .insert_many(chunk.to_vec())
            .await
            .expect("raw insert");
    }
}

/// How many products hold `name` as the summary of `part`.
async fn holding(db: &TestDb, part: &str, name: &str) -> u64 {
    db.raw()
        .collection::<Document>("bg_products")
        .count_documents(
            doc! { "parts": { "$elemMatch": { "id": part, "name": { "$eq": name } } } },
        )
        .await
        .expect("raw count")
}

async fn intents(db: &TestDb) -> Vec<Document> {
    db.raw()
        .collection::<Document>(INTENTS)
        .find(doc! {})
        .await
        .expect("raw find")
        .try_collect()
        .await
        .expect("raw cursor")
}

async fn setup(parts: &[(&str, &str)]) -> odm::Result<TestDb> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    db.odm().cascade_worker().create_index().await?;
    for (id, name) in parts {
        db.odm()
            .insert_one(&Part {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
            })
            .await?;
    }
    db.odm().supports_transactions().await?;
    db.commands().clear();
    Ok(db)
}

#[tokio::test]
async fn a_rename_records_an_intent_in_its_transaction_and_writes_no_copy() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 10).await;

    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["findAndModify", "update", "commitTransaction"]);
    // Both writes are in one transaction.
    for c in &commands[..2] {
        let c = c.command.as_ref().unwrap();
        assert_eq!(c.get_bool("autocommit").ok(), Some(false), "{c}");
    }
    assert_eq!(
        holding(&db, "p1", "grommet").await,
        10,
        "no copy written yet"
    );
    let recorded = intents(&db).await;
    assert_eq!(recorded.len(), 1);
    let intent = &recorded[0];
    assert_eq!(
        intent.get_document("_id").unwrap(),
        &doc! { "source": "bg_parts", "id": "p1" }
    );
    assert_eq!(intent.get_i64("seq").unwrap(), 1);
    assert_eq!(
        intent.get_array("copies").unwrap(),
        &vec![Bson::from("bg_products.parts")]
    );
    let since = intent.get_datetime("since").unwrap().to_owned();

    // A second rename bumps the same intent; the oldest write's time stays.
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("brass grommet"))
        .await?;
    let recorded = intents(&db).await;
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].get_i64("seq").unwrap(), 2);
    assert_eq!(recorded[0].get_datetime("since").unwrap(), &since);

    let status = db.odm().cascade_status().await?;
    assert_eq!((status.pending, status.claimed, status.failing), (1, 0, 0));
    assert_eq!(status.oldest, Some(since));

    // An update of a field nothing copies records nothing.
    db.commands().clear();
    db.odm()
        .update_many(Part::id().eq("nothing"), Part::name().set("x"))
        .await?;
    assert_eq!(intents(&db).await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_source_write_that_fails_records_no_intent() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet"), ("p2", "washer")]).await?;
    products(&db, "p1", "grommet", 0, 3).await;
    let err = db
        .odm()
        .update_by_id::<Part>("p1", Part::name().set("washer"))
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::DuplicateKey { .. }), "{err}");
    assert!(
        intents(&db).await.is_empty(),
        "the intent aborted with the write"
    );
    assert_eq!(
        stored_one(&db, "bg_parts", "p1")
            .await
            .unwrap()
            .get_str("name")
            .unwrap(),
        "grommet"
    );
    // The same rename without the conflict is recorded.
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;
    assert_eq!(intents(&db).await.len(), 1);
    assert_eq!(holding(&db, "p1", "grommet").await, 3);
    Ok(())
}

/// A find-and-modify that changes a background copy records the intent in the same
/// transaction as its write: when the intent cannot be written, the write does not land
/// either (a crash between the two cannot leave a write without its intent).
#[tokio::test]
async fn a_find_and_modify_records_its_intent_in_the_same_transaction() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 3).await;
    let renamed = db
        .odm()
        .find_one_and_update(Part::id_field().eq("p1"), Part::name().set("zinc grommet"))
        .return_new()
        .await?
        .expect("p1");
    assert_eq!(renamed.name, "zinc grommet");
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["findAndModify", "update", "commitTransaction"]);
    for c in &commands[..2] {
        let c = c.command.as_ref().unwrap();
        assert_eq!(c.get_bool("autocommit").ok(), Some(false), "{c}");
    }
    let recorded = intents(&db).await;
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].get_i64("seq").unwrap(), 1);
    assert_eq!(
        holding(&db, "p1", "grommet").await,
        3,
        "no copy written yet"
    );

    // The intents' collection now refuses every write: the rename is refused with it.
    db.raw()
        .run_command(doc! {
            "collMod": INTENTS,
            "validator": { "never": { "$exists": true } },
        })
        .await
        .expect("collMod");
    let err = db
        .odm()
        .find_one_and_update(Part::id_field().eq("p1"), Part::name().set("brass grommet"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains(INTENTS), "{err}");
    let part = stored_one(&db, "bg_parts", "p1").await.unwrap();
    assert_eq!(part.get_str("name").unwrap(), "zinc grommet", "rolled back");
    assert_eq!(intents(&db).await[0].get_i64("seq").unwrap(), 1);

    // Once the intents can be written again, the worker applies the first rename.
    db.raw()
        .run_command(doc! { "collMod": INTENTS, "validator": {} })
        .await
        .expect("collMod");
    db.odm().cascade_worker().run_until_idle().await?;
    assert_eq!(holding(&db, "p1", "zinc grommet").await, 3);
    Ok(())
}

/// Without transactions the intent could not commit with the write: an update of a source
/// with a background copy is refused before anything is sent, and nothing changes.
#[tokio::test]
async fn without_transactions_a_background_source_update_is_refused() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 3).await;
    let fixed = db.odm().clone().without_transactions();
    let err = fixed
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::Unsupported(m) if m.contains("background") && m.contains("no transactions")),
        "{err}"
    );
    let err = fixed
        .find_one_and_update(Part::id_field().eq("p1"), Part::name().set("zinc grommet"))
        .await
        .unwrap_err();
    assert!(matches!(&err, odm::Error::Unsupported(_)), "{err}");
    assert!(sent(&db).iter().all(|c| c == "hello"), "{:?}", sent(&db));
    let part = stored_one(&db, "bg_parts", "p1").await.unwrap();
    assert_eq!(part.get_str("name").unwrap(), "grommet");
    assert!(intents(&db).await.is_empty());
    Ok(())
}

/// The verify sweep stays the safety net: copies a background cascade has not written yet
/// are found stale, and repaired from the source, with no worker.
#[tokio::test]
async fn the_verify_sweep_repairs_background_copies_without_a_worker() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet"), ("other", "other")]).await?;
    products(&db, "p1", "grommet", 0, 5).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;
    assert_eq!(holding(&db, "p1", "grommet").await, 5, "not cascaded yet");
    let found = db.odm().verify_copies().of::<Product>().await?;
    assert_eq!(found.issues.len(), 5, "{found}");
    let repaired = db
        .odm()
        .verify_copies()
        .of::<Product>()
        .repair(true)
        .await?;
    assert!(repaired.repairs >= 1, "{repaired}");
    assert_eq!(holding(&db, "p1", "zinc grommet").await, 5);
    // The intent is still there: the worker applies it, and finds nothing left to write.
    let report = db.odm().cascade_worker().run_until_idle().await?;
    assert_eq!(report.written, 0, "{report:?}");
    assert!(intents(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn the_worker_writes_in_bounded_batches_and_reports_the_lag() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 2_500).await;
    products(&db, "p2", "bolt", 10_000, 50).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let status = db.odm().cascade_status().await?;
    assert!(status.lag >= Duration::from_millis(30), "{status:?}");
    db.commands().clear();

    let mut worker = db.odm().cascade_worker().batch_size(1_000);
    let report = worker.run_until_idle().await?;
    assert_eq!(
        (report.applied, report.batches, report.written),
        (1, 3, 2_500)
    );
    assert!(report.lag >= Duration::from_millis(30), "{report:?}");
    assert!(report.failed.is_empty());

    let commands = db.commands().take();
    let updates: Vec<&Document> = commands
        .iter()
        .filter(|c| c.name == "update")
        .filter_map(|c| c.command.as_ref())
        .filter(|c| c.get_str("update").ok() == Some("bg_products"))
        .collect();
    assert_eq!(updates.len(), 3);
    for u in updates {
        let q = u.get_array("updates").unwrap()[0]
            .as_document()
            .unwrap()
            .get_document("q")
            .unwrap();
        // The batch's ids first, alone: the server selects by `_id`.
        assert_eq!(q.keys().next().map(String::as_str), Some("_id"));
        let ids = q.get_document("_id").unwrap().get_array("$in").unwrap();
        assert!(ids.len() <= 1_000, "a batch holds at most batch_size ids");
    }
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    let batch = ["update", "update", "commitTransaction"];
    let expected: Vec<&str> = ["find", "findAndModify", "find", "find", "find"]
        .into_iter()
        .chain(batch)
        .chain(["getMore"])
        .chain(batch)
        .chain(["getMore"])
        .chain(batch)
        .chain(["delete", "find"])
        .collect();
    // Candidate, claim, intent, source, the dependents that differ (1,000 ids per reply);
    // per batch the intent, the copies, the commit; the intent deleted; nothing left.
    assert_eq!(names, expected);
    assert_eq!(holding(&db, "p1", "zinc grommet").await, 2_500);
    assert_eq!(
        holding(&db, "p2", "bolt").await,
        50,
        "other sources' copies untouched"
    );
    assert!(intents(&db).await.is_empty());
    assert_eq!(db.odm().cascade_status().await?.pending, 0);
    // Nothing left to do: the worker claims nothing.
    let again = worker.run_until_idle().await?;
    assert_eq!(again.applied, 0);
    Ok(())
}

/// The child process of `a_killed_worker_is_resumed_without_repair`: a worker that runs until
/// it is killed. Ignored unless run by that test.
#[tokio::test]
#[ignore]
async fn worker_child() -> odm::Result<()> {
    let Ok(target) = std::env::var("ODM_BACKGROUND_CHILD") else {
        return Ok(());
    };
    let (uri, name) = target.split_once('|').expect("uri|database");
    let odm = odm::Odm::connect(uri, name)
        .await?
        .with_catalog(common::catalog());
    odm.cascade_worker()
        .batch_size(500)
        .lease(Duration::from_millis(800))
        .pause(Duration::from_millis(20))
        .run()
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_killed_worker_is_resumed_without_repair() -> odm::Result<()> {
    const N: i64 = 20_000;
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, N).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;

    // A real process, killed with SIGKILL between two of its batches or inside one.
    let uri = odm::testing::test_uri()?;
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "background_cascades::worker_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("ODM_BACKGROUND_CHILD", format!("{uri}|{}", db.name()))
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn the worker");
    let start = Instant::now();
    loop {
        let done = holding(&db, "p1", "zinc grommet").await;
        if done >= 2_000 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the child wrote {done} copies"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let before = holding(&db, "p1", "zinc grommet").await;
    assert!(
        before > 0 && before < N as u64,
        "killed mid-cascade: {before} of {N}"
    );
    let status = db.odm().cascade_status().await?;
    assert_eq!(status.pending, 1);
    assert!(status.lag > Duration::ZERO);

    // Restart: once the dead worker's lease has expired, a new one takes over.
    tokio::time::sleep(Duration::from_millis(900)).await;
    db.commands().clear();
    let report = db
        .odm()
        .cascade_worker()
        .batch_size(500)
        .run_until_idle()
        .await?;
    assert_eq!(report.applied, 1);
    assert_eq!(
        report.written,
        N as u64 - before,
        "only what the dead worker left"
    );
    let batches = (N as u64 - before).div_ceil(500);
    assert_eq!(report.batches, batches, "resumed, not started over");
    let updates = db
        .commands()
        .take()
        .iter()
        .filter(|c| {
            c.name == "update"
                && c.command.as_ref().and_then(|d| d.get_str("update").ok()) == Some("bg_products")
        })
        .count();
    assert_eq!(updates as u64, batches);

    assert_eq!(
        holding(&db, "p1", "zinc grommet").await,
        N as u64,
        "every copy converged"
    );
    assert!(intents(&db).await.is_empty());
    assert_eq!(db.odm().cascade_status().await?.pending, 0);
    Ok(())
}

#[tokio::test]
async fn two_renames_and_two_workers_end_on_the_newest_value() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet"), ("p2", "washer")]).await?;
    products(&db, "p1", "grommet", 0, 3_000).await;
    products(&db, "p2", "washer", 10_000, 1_000).await;
    for name in ["grommet 2", "grommet 3"] {
        db.odm()
            .update_by_id::<Part>("p1", Part::name().set(name))
            .await?;
    }
    db.odm()
        .update_by_id::<Part>("p2", Part::name().set("washer 2"))
        .await?;
    assert_eq!(intents(&db).await.len(), 2);
    assert_eq!(holding(&db, "p1", "grommet").await, 3_000);
    let mut a = db.odm().cascade_worker().batch_size(200);
    let mut b = db.odm().cascade_worker().batch_size(300);
    // Renames while the workers run: each is recorded, and applied by one of them.
    let renames = async {
        for i in 4..8 {
            tokio::time::sleep(Duration::from_millis(15)).await;
            db.odm()
                .update_by_id::<Part>("p1", Part::name().set(format!("grommet {i}")))
                .await?;
        }
        Ok::<_, odm::Error>(())
    };
    let (ra, rb, renamed) = tokio::join!(a.run_until_idle(), b.run_until_idle(), renames);
    renamed?;
    let (ra, rb) = (ra?, rb?);
    assert!(ra.failed.is_empty() && rb.failed.is_empty());
    // Whatever was left when both went idle (a rename after their last claim).
    db.odm().cascade_worker().run_until_idle().await?;
    assert_eq!(holding(&db, "p1", "grommet 7").await, 3_000);
    assert_eq!(holding(&db, "p2", "washer 2").await, 1_000);
    assert!(intents(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_worker_whose_claim_was_taken_over_writes_nothing_more() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 1_000).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v2"))
        .await?;
    let mut slow = db
        .odm()
        .cascade_worker()
        .batch_size(100)
        .lease(Duration::from_millis(200));
    let first = slow.run_batches(1).await?;
    assert_eq!(first.written, 100, "one batch with v2, then it stalls");
    // A newer write, then the stalled worker's lease expires and another takes over.
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v3"))
        .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let other = db
        .odm()
        .cascade_worker()
        .batch_size(100)
        .run_until_idle()
        .await?;
    assert_eq!((other.applied, other.written), (1, 1_000));
    assert_eq!(holding(&db, "p1", "v3").await, 1_000);
    // The stalled worker wakes up with v2 in hand: it finds its claim gone and writes nothing.
    db.commands().clear();
    let late = slow.run_until_idle().await?;
    assert_eq!((late.lost, late.written, late.batches), (1, 0, 0));
    assert!(!sent(&db).iter().any(|n| n == "update"), "no copy written");
    assert_eq!(holding(&db, "p1", "v3").await, 1_000);
    Ok(())
}

#[tokio::test]
async fn a_stale_pass_restarts_with_the_newer_value() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 500).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v2"))
        .await?;
    let mut worker = db.odm().cascade_worker().batch_size(100);
    worker.run_batches(2).await?;
    assert_eq!(holding(&db, "p1", "v2").await, 200);
    // The same worker, still holding its claim, goes on after a newer write: its next batch
    // finds another `seq`, writes nothing, and the pass starts over from the source.
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v3"))
        .await?;
    let rest = worker.run_until_idle().await?;
    assert_eq!((rest.applied, rest.written), (1, 500));
    assert_eq!(holding(&db, "p1", "v3").await, 500);
    assert!(intents(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn applying_an_intent_twice_is_harmless() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 300).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v2"))
        .await?;
    let first = db.odm().cascade_worker().run_until_idle().await?;
    assert_eq!(first.written, 300);
    // The same intent again (a retried record, an intent restored from a backup).
    db.raw()
        .collection::<Document>(INTENTS)
        .insert_one(doc! {
            "_id": { "source": "bg_parts", "id": "p1" },
            "seq": 1_i64,
            "copies": ["bg_products.parts"],
            "since": odm::bson::DateTime::now(),
        })
        .await
        .expect("raw insert");
    let second = db.odm().cascade_worker().run_until_idle().await?;
    // A first pass walks every dependent of the source: one batch, whose update skips the
    // copies already equal and so writes nothing.
    assert_eq!((second.applied, second.written, second.batches), (1, 0, 1));
    assert_eq!(holding(&db, "p1", "v2").await, 300);
    Ok(())
}

#[tokio::test]
async fn hostile_values_and_ids_are_copied_as_values() -> odm::Result<()> {
    let hostile = ["$where", "a.b", "$[copy]", "{\"$gt\": \"\"}"];
    let ids: Vec<String> = hostile.iter().map(|h| format!("{h}.id")).collect();
    let db = setup(&[]).await?;
    for (i, id) in ids.iter().enumerate() {
        db.odm()
            .insert_one(&Part {
                id: id.clone(),
                name: format!("plain {i}"),
            })
            .await?;
        products(&db, id, &format!("plain {i}"), i as i64 * 100, 20).await;
    }
    for (id, name) in ids.iter().zip(hostile) {
        db.odm()
            .update_by_id::<Part>(id.as_str(), Part::name().set(name))
            .await?;
    }
    let recorded: Vec<Bson> = intents(&db)
        .await
        .iter()
        .map(|d| d.get_document("_id").unwrap().get("id").unwrap().clone())
        .collect();
    assert_eq!(recorded.len(), 4);
    for id in &ids {
        assert!(
            recorded.contains(&Bson::from(id.as_str())),
            "{id} recorded as a value"
        );
        assert_eq!(holding(&db, id, "$where").await, 0);
    }
    let report = db.odm().cascade_worker().run_until_idle().await?;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    for (id, name) in ids.iter().zip(hostile) {
        assert_eq!(holding(&db, id, name).await, 20, "{name}");
    }
    // The other summaries are untouched.
    assert_eq!(
        db.raw()
            .collection::<Document>("bg_products")
            .count_documents(doc! { "parts": { "$elemMatch": { "id": "other", "name": "other" } } })
            .await
            .expect("count"),
        80
    );
    Ok(())
}

#[tokio::test]
async fn malformed_intents_are_typed_errors_and_do_not_block_others() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 10).await;
    let old = odm::bson::DateTime::from_millis(0);
    let bad = [
        (
            doc! { "_id": 5, "seq": 1_i64, "copies": [], "since": old },
            "_id",
        ),
        (
            doc! { "_id": { "source": "bg_parts", "id": "x" }, "seq": "one", "copies": ["bg_products.parts"], "since": old },
            "seq",
        ),
        (
            doc! { "_id": { "source": "bg_parts", "id": "y" }, "seq": 1_i64, "copies": ["bg_products.nope"], "since": old },
            "copies.0",
        ),
        (
            doc! { "_id": { "source": "nowhere", "id": "z" }, "seq": 1_i64, "copies": [], "since": old },
            "_id.source",
        ),
    ];
    for (d, _) in &bad {
        db.raw()
            .collection::<Document>(INTENTS)
            .insert_one(d.clone())
            .await
            .expect("insert");
    }
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v2"))
        .await?;
    let report = db.odm().cascade_worker().run_until_idle().await?;
    assert_eq!(
        report.applied, 1,
        "the good intent is applied past the bad ones"
    );
    assert_eq!(holding(&db, "p1", "v2").await, 10);
    assert_eq!(report.failed.len(), 4);
    for (e, (d, path)) in report.failed.iter().zip(&bad) {
        match e {
            odm::Error::Decode {
                collection,
                id,
                path: p,
                ..
            } => {
                assert_eq!(collection, INTENTS);
                assert_eq!(p, path, "{e}");
                assert!(
                    id.contains(&d.get("_id").unwrap().to_string()) || id.contains("5"),
                    "{e}"
                );
            }
            other => panic!("expected a decode error, got {other}"),
        }
    }
    // Each failure is recorded in its intent, which waits to be retried.
    let left = intents(&db).await;
    assert_eq!(left.len(), 4);
    assert!(left.iter().all(|d| d.get_str("error").is_ok()));
    let status = db.odm().cascade_status().await?;
    assert_eq!((status.pending, status.failing), (4, 4));
    Ok(())
}

#[tokio::test]
async fn a_malformed_source_value_is_a_typed_error_and_copies_nothing() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 10).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v2"))
        .await?;
    // Written behind the ODM's back after the rename.
    db.raw()
        .collection::<Document>("bg_parts")
        .update_one(doc! { "_id": "p1" }, doc! { "$set": { "name": 17 } })
        .await
        .expect("raw update");
    let report = db.odm().cascade_worker().run_until_idle().await?;
    assert_eq!(report.written, 0);
    match &report.failed[..] {
        [odm::Error::Decode {
            collection,
            id,
            path,
            ..
        }] => {
            assert_eq!((collection.as_str(), path.as_str()), ("bg_parts", "name"));
            assert!(id.contains("p1"), "{id}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(holding(&db, "p1", "grommet").await, 10);
    Ok(())
}

#[tokio::test]
async fn flat_copies_and_replacements_are_recorded_and_applied() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    let product = Product {
        id: 1,
        name: "fan".into(),
        parts: Vec::new(),
    };
    db.odm().insert_one(&product).await?;
    let orders: Vec<Order> = (0..40)
        .map(|i| Order {
            id: i,
            product: Ref::new(1),
            product_name: String::new(),
        })
        .collect();
    db.odm().insert_many(&orders).await?;
    let stored = stored_one(&db, "bg_orders", 3).await.unwrap();
    assert_eq!(
        stored.get_str("product_name").unwrap(),
        "fan",
        "filled on insert as always"
    );
    db.commands().clear();

    db.odm()
        .replace_one(&Product {
            name: "blower".into(),
            ..product.clone()
        })
        .await?;
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["findAndModify", "update", "commitTransaction"]);
    for c in &commands[..2] {
        let c = c.command.as_ref().unwrap();
        assert_eq!(
            c.get_bool("autocommit").ok(),
            Some(false),
            "one transaction: {c}"
        );
    }
    assert_eq!(
        stored_one(&db, "bg_orders", 3)
            .await
            .unwrap()
            .get_str("product_name")
            .unwrap(),
        "fan"
    );
    let report = db
        .odm()
        .cascade_worker()
        .batch_size(15)
        .run_until_idle()
        .await?;
    assert_eq!((report.applied, report.batches, report.written), (1, 3, 40));
    let renamed = db
        .raw()
        .collection::<Document>("bg_orders")
        .count_documents(doc! { "product_name": "blower" })
        .await
        .expect("count");
    assert_eq!(renamed, 40);
    Ok(())
}

#[tokio::test]
async fn waiting_for_cascades_without_a_worker_reports_the_lag() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 5).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("v2"))
        .await?;
    let err = db
        .odm()
        .wait_for_cascades(Duration::from_millis(120))
        .await
        .unwrap_err();
    match err {
        odm::Error::CascadeLag {
            pending,
            failing,
            lag,
            waited,
        } => {
            assert_eq!((pending, failing), (1, 0));
            assert!(lag >= Duration::from_millis(100) && waited >= Duration::from_millis(120));
        }
        other => panic!("{other}"),
    }
    let worker = db
        .odm()
        .cascade_worker()
        .poll_interval(Duration::from_millis(10));
    let running = tokio::spawn(worker.run());
    db.odm().wait_for_cascades(Duration::from_secs(10)).await?;
    running.abort();
    assert_eq!(holding(&db, "p1", "v2").await, 5);
    Ok(())
}

/// The network loses the replies of a batch's commit (twice: the driver commits again once by
/// itself, then the worker does): the batch is committed once, the intent applied once, and
/// every copy holds the new name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_commit_reply_is_lost_is_committed_once() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 30).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let odm = proxy.odm(db.name()).await?.with_catalog(common::catalog());
    proxy.lose_replies("commitTransaction", 2);
    let report = odm.cascade_worker().batch_size(10).run_until_idle().await?;
    assert_eq!((report.applied, report.batches, report.written), (1, 3, 30));
    assert_eq!(proxy.count_of("commitTransaction"), 5);
    assert_eq!(holding(&db, "p1", "zinc grommet").await, 30);
    assert!(intents(&db).await.is_empty());
    Ok(())
}

/// The server stops answering (its process stopped, the network hung) for 3 s while the worker
/// is in the middle of a cascade over 300 copies. The batch in flight ends with an error once
/// the driver's monitor gives up (`connectTimeoutMS`, 1 s here), and `run` keeps its claim: as
/// soon as the server answers again it goes on where it stopped, well before its 60 s lease
/// would have let anyone take the intent over. The held batch belonged to a transaction that
/// was never committed; the worker's next transaction on the same session ends it. Every copy
/// converges and the intent is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_server_pauses_goes_on_with_its_claim_when_it_answers() -> odm::Result<()> {
    let db = setup(&[("p1", "grommet")]).await?;
    products(&db, "p1", "grommet", 0, 300).await;
    db.odm()
        .update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let uri = format!("{}&{}", proxy.uri(), common::GIVE_UP_SOON);
    let odm = odm::Odm::connect(&uri, db.name())
        .await?
        .with_catalog(common::catalog());
    let worker = odm
        .cascade_worker()
        .batch_size(10)
        .pause(Duration::from_millis(20))
        .poll_interval(Duration::from_millis(50))
        .lease(Duration::from_secs(60));
    let running = tokio::spawn(worker.run());

    // Some batches land, then the server stops answering in the middle of the cascade.
    let deadline = Instant::now() + Duration::from_secs(10);
    while holding(&db, "p1", "zinc grommet").await < 30 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    proxy.pause();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = holding(&db, "p1", "zinc grommet").await;
    assert!((30..300).contains(&during), "{during} copies when paused");
    let resumed = Instant::now();
    proxy.resume();

    let deadline = resumed + Duration::from_secs(20);
    while !intents(&db).await.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = resumed.elapsed();
    assert!(
        !running.is_finished(),
        "run() went on after the server was lost"
    );
    running.abort();
    assert!(
        took < Duration::from_secs(20),
        "the cascade finished {took:?} after the server answered again"
    );
    assert_eq!(holding(&db, "p1", "zinc grommet").await, 300);
    assert!(intents(&db).await.is_empty());
    Ok(())
}
