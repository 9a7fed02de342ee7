//! The follower tried as the world will: its server paused and killed while it runs, hostile
//! values in the events it reads, and malformed documents in the collections it maintains.

use std::time::Duration;

use odm::bson::{doc, Bson, DateTime, Document};

use super::common;

/// Renames of `parts` by a raw client of its own, retried while the server is away.
async fn rename(parts: &odm::mongodb::Collection<Document>, ids: std::ops::Range<i64>, round: u32) {
    for i in ids {
        let started = std::time::Instant::now();
        loop {
            let done = parts
                .update_one(
                    doc! { "_id": i },
                    doc! { "$set": { "name": format!("part {i} r{round}") } },
                )
                .await;
            match done {
                Ok(_) => break,
                Err(e) if started.elapsed() < Duration::from_secs(60) => {
                    eprintln!("rename retried: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("rename: {e}"),
            }
        }
    }
}

/// A follower running while its server is paused (SIGSTOP for two seconds) and then killed
/// (SIGKILL, started again on the same port and data): it waits, goes on when the server
/// answers, and every copy ends equal to its source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_then_killed_server_loses_no_event() -> odm::Result<()> {
    const PARTS: i64 = 20;
    let mut server = common::Standalone::start_with(&[]);
    let odm = odm::Odm::connect(&server.uri, "follower_server_lost")
        .await?
        .with_catalog(common::catalog());
    let db = odm.database().clone();
    let raw = |c: &str| db.collection::<Document>(c);
    raw("parts")
        .insert_many((0..PARTS).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    raw("products")
        .insert_many((0..400_i64).map(|i| {
            let (a, b) = (i % PARTS, (i * 3 + 1) % PARTS);
            doc! { "_id": i, "parts": [
                { "id": a, "name": format!("part {a}") },
                { "id": b, "name": format!("part {b}") },
            ] }
        }))
        .await
        .expect("raw");
    let mut follower = odm.follower().max_wait(Duration::from_millis(100));
    follower.run_until_idle().await?;
    let task = tokio::spawn(follower.run());

    // The other program's client, with short timeouts of its own.
    let other =
        odm::mongodb::Client::with_uri_str(format!("{}&serverSelectionTimeoutMS=2000", server.uri))
            .await?;
    let parts = other
        .database("follower_server_lost")
        .collection::<Document>("parts");
    rename(&parts, 0..PARTS, 1).await;
    server.signal("STOP");
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.signal("CONT");
    rename(&parts, 0..PARTS, 2).await;
    odm.wait_for_follower(Duration::from_secs(60)).await?;
    rename(&parts, 0..PARTS / 2, 3).await;
    server.kill_and_restart();
    rename(&parts, PARTS / 2..PARTS, 3).await;

    odm.wait_for_follower(Duration::from_secs(60)).await?;
    assert!(!task.is_finished(), "the follower goes on");
    task.abort();
    common::copies_equal(&db, "parts", "products", "parts").await;
    Ok(())
}

/// The server losing the follower's last stored positions (acknowledged, not yet durable when
/// it was killed), played by putting the follower's document back as it was: the follower
/// notices at its next run and reads again from the stored position, rather than going on from
/// the position it holds in memory, past events the server no longer has and may number again.
#[tokio::test]
async fn stored_positions_the_server_lost_are_noticed() -> odm::Result<()> {
    let db = common::db().await?;
    let raw = |c: &str| db.raw().collection::<Document>(c);
    raw("parts")
        .insert_one(doc! { "_id": 1_i64, "name": "bolt" })
        .await
        .expect("raw");
    raw("products")
        .insert_one(doc! { "_id": 1_i64, "parts": [{ "id": 1_i64, "name": "bolt" }] })
        .await
        .expect("raw");
    let mut follower = db.odm().follower().max_wait(Duration::from_millis(100));
    follower.run_until_idle().await?;
    let before = raw(odm::follower::FOLLOWER)
        .find_one(doc! {})
        .await
        .expect("raw")
        .expect("the follower's document");
    raw("parts")
        .update_one(
            doc! { "_id": 1_i64 },
            doc! { "$set": { "name": "zinc bolt" } },
        )
        .await
        .expect("raw");
    let report = follower.run_until_idle().await?;
    assert_eq!((report.events, report.cascaded), (1, 1));

    // The crash: the follower's document as it was before that run; the copy too.
    raw(odm::follower::FOLLOWER)
        .replace_one(doc! { "_id": before.get("_id").unwrap() }, &before)
        .await
        .expect("raw");
    raw("products")
        .update_one(
            doc! { "_id": 1_i64 },
            doc! { "$set": { "parts.0.name": "bolt" } },
        )
        .await
        .expect("raw");
    let report = follower.run_until_idle().await?;
    assert_eq!((report.events, report.cascaded), (1, 1), "{report:?}");
    let product = raw("products")
        .find_one(doc! { "_id": 1_i64 })
        .await
        .expect("raw")
        .expect("product");
    let summary = product.get_array("parts").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(summary.get_str("name").unwrap(), "zinc bolt");
    follower.stop().await?;
    Ok(())
}

/// Values another program wrote that look like operators, field paths or variables: every
/// one is copied, summarised and followed as the value it is, and the delete of a document
/// whose `_id` looks like an operator touches only what references that `_id`.
#[tokio::test]
async fn hostile_values_in_events_stay_values() -> odm::Result<()> {
    const HOSTILE: [&str; 5] = ["$where", "$$ROOT", "$name", "a.b", "{ \"$gt\": \"\" }"];
    let db = common::db().await?;
    let raw = |c: &str| db.raw().collection::<Document>(c);
    raw("parts")
        .insert_many((0..5_i64).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    raw("products")
        .insert_many(
            (0..5_i64)
                .map(|i| doc! { "_id": i, "parts": [{ "id": i, "name": format!("part {i}") }] }),
        )
        .await
        .expect("raw");
    raw("orders")
        .insert_many(
            (0..5_i64).map(|i| doc! { "_id": i, "part": i, "part_name": format!("part {i}") }),
        )
        .await
        .expect("raw");
    raw("hosts")
        .insert_one(doc! { "_id": 1_i64, "recent": [] })
        .await
        .expect("raw");
    // Tree nodes named like operators and paths: "$root" > "a.b" > "$$CURRENT"; "{}".
    raw("subjects")
        .insert_many([
            doc! { "_id": "$root", "parent": null, "ancestors": [] },
            doc! { "_id": "a.b", "parent": "$root", "ancestors": ["$root"] },
            doc! { "_id": "$$CURRENT", "parent": "a.b", "ancestors": ["$root", "a.b"] },
            doc! { "_id": "{}", "parent": null, "ancestors": [] },
        ])
        .await
        .expect("raw");
    // Bins of the parts, and of a part whose `_id` is a document that reads as an operator
    // (when the server stores one).
    raw("bins")
        .insert_many((0..5_i64).map(|i| doc! { "_id": i, "part": i }))
        .await
        .expect("raw");
    let operator_id = doc! { "$ne": 0_i64 };
    let stores_operator_ids = raw("parts")
        .insert_one(doc! { "_id": operator_id.clone(), "name": "odd" })
        .await
        .is_ok();
    if stores_operator_ids {
        raw("bins")
            .insert_one(doc! { "_id": 99_i64, "part": operator_id.clone() })
            .await
            .expect("raw");
    }
    super::started(&db).await?;

    for (i, name) in HOSTILE.iter().enumerate() {
        raw("parts")
            .update_one(doc! { "_id": i as i64 }, doc! { "$set": { "name": *name } })
            .await
            .expect("raw");
        raw("logmsgs")
            .insert_one(doc! {
                "_id": i as i64,
                "time": DateTime::from_millis(1_700_000_000_000 + i as i64),
                "text": *name,
                "host": 1_i64,
            })
            .await
            .expect("raw");
    }
    raw("subjects")
        .update_one(doc! { "_id": "a.b" }, doc! { "$set": { "parent": "{}" } })
        .await
        .expect("raw");
    if stores_operator_ids {
        raw("parts")
            .delete_one(doc! { "_id": operator_id.clone() })
            .await
            .expect("raw");
    }
    let report = super::follow(&db).await?;
    assert_eq!(report.cascaded, 5, "{report:?}");

    for (i, name) in HOSTILE.iter().enumerate() {
        let i = i as i64;
        let product = common::stored_one(&db, "products", Bson::Int64(i))
            .await
            .expect("product");
        let summary = product.get_array("parts").unwrap()[0]
            .as_document()
            .unwrap()
            .clone();
        assert_eq!(summary.get_str("name").unwrap(), *name, "{product}");
        let order = common::stored_one(&db, "orders", Bson::Int64(i))
            .await
            .expect("order");
        assert_eq!(order.get_str("part_name").unwrap(), *name, "{order}");
    }
    let host = common::stored_one(&db, "hosts", Bson::Int64(1))
        .await
        .expect("host");
    let texts: Vec<&str> = host
        .get_array("recent")
        .unwrap()
        .iter()
        .map(|s| s.as_document().unwrap().get_str("text").unwrap())
        .collect();
    assert_eq!(texts, [HOSTILE[4], HOSTILE[3], HOSTILE[2]]);
    let subjects = super::stored(&db, "subjects").await;
    let ancestors = |id: &str| -> Vec<Bson> {
        subjects
            .iter()
            .find(|d| d.get_str("_id").ok() == Some(id))
            .and_then(|d| d.get_array("ancestors").ok().cloned())
            .unwrap()
    };
    assert_eq!(ancestors("a.b"), [Bson::from("{}")]);
    assert_eq!(
        ancestors("$$CURRENT"),
        [Bson::from("{}"), Bson::from("a.b")]
    );
    assert_eq!(ancestors("$root"), Vec::<Bson>::new());
    // Every bin of an ordinary part is still there.
    let bins: Vec<Bson> = super::stored(&db, "bins")
        .await
        .iter()
        .map(|b| b.get("_id").unwrap().clone())
        .collect();
    assert_eq!(
        bins,
        (0..5_i64).map(Bson::Int64).collect::<Vec<_>>(),
        "operator ids stored: {stores_operator_ids}"
    );
    Ok(())
}

/// Documents another program left malformed: a source whose copied value has a type its copy
/// cannot hold is reported (collection, `_id`, field) and left out while the other events are
/// applied; dependents holding garbage beside their summaries keep it; tree nodes below a
/// moved node whose `ancestors` is missing or not an array are found by `parent` and repaired.
#[tokio::test]
async fn malformed_documents_are_reported_or_repaired_and_the_rest_applied() -> odm::Result<()> {
    let db = common::db().await?;
    let raw = |c: &str| db.raw().collection::<Document>(c);
    raw("parts")
        .insert_many((0..3_i64).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    raw("products")
        .insert_many([
            doc! { "_id": 0_i64, "parts": [{ "id": 0_i64, "name": "part 0" }] },
            doc! { "_id": 1_i64, "parts": "not an array" },
            doc! { "_id": 2_i64, "parts": [{ "id": 1_i64, "name": "part 1" }, "garbage", { "id": 2_i64 }] },
        ])
        .await
        .expect("raw");
    raw("subjects")
        .insert_many([
            doc! { "_id": "science", "parent": null, "ancestors": [] },
            doc! { "_id": "physics", "parent": "science", "ancestors": ["science"] },
            doc! { "_id": "optics", "parent": "physics" },
            doc! { "_id": "lasers", "parent": "optics", "ancestors": "not an array" },
            doc! { "_id": "arts", "parent": null, "ancestors": [] },
        ])
        .await
        .expect("raw");
    super::started(&db).await?;
    raw("parts")
        .update_one(doc! { "_id": 0_i64 }, doc! { "$set": { "name": 42 } })
        .await
        .expect("raw");
    for i in 1..3_i64 {
        raw("parts")
            .update_one(
                doc! { "_id": i },
                doc! { "$set": { "name": format!("part {i} r1") } },
            )
            .await
            .expect("raw");
    }
    raw("subjects")
        .update_one(
            doc! { "_id": "physics" },
            doc! { "$set": { "parent": "arts" } },
        )
        .await
        .expect("raw");
    let report = super::follow(&db).await?;
    assert_eq!((report.cascaded, report.tree_nodes), (2, 3), "{report:?}");
    let bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    assert_eq!(bad, [("parts", "{ _id: 0 }", "name")]);

    let products = super::stored(&db, "products").await;
    assert_eq!(
        products[0],
        doc! { "_id": 0_i64, "parts": [{ "id": 0_i64, "name": "part 0" }] }
    );
    assert_eq!(products[1], doc! { "_id": 1_i64, "parts": "not an array" });
    assert_eq!(
        products[2],
        doc! { "_id": 2_i64, "parts": [
            { "id": 1_i64, "name": "part 1 r1" }, "garbage", { "id": 2_i64, "name": "part 2 r1" },
        ] }
    );
    let subjects = super::stored(&db, "subjects").await;
    let ancestors = |id: &str| {
        subjects
            .iter()
            .find(|d| d.get_str("_id").ok() == Some(id))
            .and_then(|d| d.get("ancestors").cloned())
            .unwrap()
    };
    assert_eq!(ancestors("physics"), Bson::from(vec!["arts"]));
    assert_eq!(ancestors("optics"), Bson::from(vec!["arts", "physics"]));
    assert_eq!(
        ancestors("lasers"),
        Bson::from(vec!["arts", "physics", "optics"])
    );
    // The position moved on: the bad event is not read again.
    let again = super::follow(&db).await?;
    assert_eq!((again.events, again.bad_documents.len()), (0, 0));
    Ok(())
}

/// Deletes whose ids together pass the server's 16 MB command limit, applied in one batch:
/// 17,000 parts with 1,000-byte ids (17 MB of ids) deleted raw at once; some have a bin their
/// delete cascades to and an order their delete nullifies. Every rule is applied, each
/// command naming the ids split under the limit (three per rule).
#[tokio::test]
async fn deletes_past_the_command_limit_apply_in_one_batch() -> odm::Result<()> {
    const PARTS: usize = 17_000;
    let db = common::db().await?;
    let raw = |c: &str| db.raw().collection::<Document>(c);
    let id = |i: usize| format!("{i:08}{}", "x".repeat(992));
    for chunk in (0..PARTS).collect::<Vec<_>>().chunks(5_000) {
        raw("parts")
            .insert_many(chunk.iter().map(|i| doc! { "_id": id(*i), "name": "p" }))
            .await
            .expect("raw");
    }
    let held = [0, 8_500, 16_999];
    raw("bins")
        .insert_many(held.map(|i| doc! { "_id": i as i64, "part": id(i) }))
        .await
        .expect("raw");
    raw("orders")
        .insert_many(held.map(|i| doc! { "_id": i as i64, "part": id(i), "part_name": "p" }))
        .await
        .expect("raw");
    super::started(&db).await?;
    raw("parts").delete_many(doc! {}).await.expect("raw");
    db.commands().clear();
    let mut follower = db
        .odm()
        .follower()
        .batch_size(20_000)
        .max_wait(Duration::from_millis(100));
    let report = follower.run_until_idle().await?;
    follower.stop().await?;
    assert_eq!(report.deleted, PARTS as u64, "{report:?}");
    assert!(super::stored(&db, "bins").await.is_empty());
    let orders = super::stored(&db, "orders").await;
    assert_eq!(orders.len(), held.len());
    assert!(orders.iter().all(|o| o.get("part") == Some(&Bson::Null)));
    let deletes = db
        .commands()
        .take()
        .into_iter()
        .filter(|c| {
            c.name == "delete"
                && c.command.as_ref().and_then(|d| d.get_str("delete").ok()) == Some("bins")
        })
        .count();
    assert!(deletes >= 3, "{deletes} deletes of bins");
    Ok(())
}
