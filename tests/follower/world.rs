//! The follower tried as the world will: its server paused and killed while it runs, hostile
//! values in the events it reads, and malformed documents in the collections it maintains.

use std::time::Duration;

use odm::bson::{doc, Document};

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

/// Every summary of `products` equals its part's name, read back raw.
async fn copies_equal_sources(raw: impl Fn(&str) -> odm::mongodb::Collection<Document>) {
    use futures_util::TryStreamExt;
    let names: std::collections::HashMap<i64, String> = raw("parts")
        .find(doc! {})
        .await
        .expect("raw")
        .try_collect::<Vec<_>>()
        .await
        .expect("raw")
        .into_iter()
        .map(|d| {
            (
                d.get_i64("_id").unwrap(),
                d.get_str("name").unwrap().to_owned(),
            )
        })
        .collect();
    let products: Vec<Document> = raw("products")
        .find(doc! {})
        .await
        .expect("raw")
        .try_collect()
        .await
        .expect("raw");
    for p in &products {
        for s in p.get_array("parts").unwrap() {
            let s = s.as_document().unwrap();
            let id = s.get_i64("id").unwrap();
            assert_eq!(s.get_str("name").unwrap(), names[&id], "product {p}");
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
    let raw = move |c: &str| db.collection::<Document>(c);
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
    copies_equal_sources(raw).await;
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
