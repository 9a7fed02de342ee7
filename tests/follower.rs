//! Writes from other programs: a follower applies to writes made with the raw driver the
//! maintenance odm applies to its own (cascades, delete rules, latest-N arrays, trees). A raw
//! client plays the other program; everything is read back with the raw driver.

mod common;
#[path = "follower/gaps.rs"]
mod gaps;
#[path = "follower/present.rs"]
mod present;
#[path = "follower/reports.rs"]
mod reports;
#[path = "follower/two_way.rs"]
mod two_way;
#[path = "follower/world.rs"]
mod world;

use std::time::Duration;

use common::stored;
use odm::bson::{doc, Bson, DateTime, Document};
use odm::follower::{FollowerReport, FOLLOWER};
use odm::testing::TestDb;

mod models {
    use odm::bson::DateTime;
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "parts")]
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

    /// Summaries of parts: cascaded on a rename, pulled when the part goes.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "products")]
    pub struct Product {
        #[serde(rename = "_id")]
        pub id: i64,
        #[denormalize(from = "Part", fields = "name", max = 50)]
        pub parts: Vec<PartSummary>,
    }

    /// A flat copy through a reference the part's delete sets to null.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "orders")]
    pub struct Order {
        #[serde(rename = "_id")]
        pub id: i64,
        #[reference(on_delete = "nullify")]
        pub part: Option<Ref<Part>>,
        #[denormalize(from = "Part", via = "part", fields = "name")]
        #[serde(default)]
        pub part_name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "shelves")]
    pub struct Shelf {
        #[serde(rename = "_id")]
        pub id: i64,
        #[reference(many, max = 100, on_delete = "pull")]
        pub parts: Vec<Ref<Part>>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "bins")]
    pub struct Bin {
        #[serde(rename = "_id")]
        pub id: i64,
        #[reference(on_delete = "cascade")]
        pub part: Ref<Part>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "audits")]
    pub struct Audit {
        #[serde(rename = "_id")]
        pub id: i64,
        #[reference(on_delete = "restrict")]
        pub part: Ref<Part>,
    }

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Recent {
        #[serde(rename = "_id")]
        pub id: Ref<LogMsg>,
        pub time: DateTime,
        pub text: String,
    }

    /// The hosts and their log messages of the seeds, with the latest three on the host.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "hosts")]
    pub struct Host {
        #[serde(rename = "_id")]
        pub id: i64,
        #[denormalize(
            from = "LogMsg",
            via = "host",
            fields = "time, text",
            latest = 3,
            sort = "-time"
        )]
        #[serde(default)]
        pub recent: Vec<Recent>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "logmsgs")]
    pub struct LogMsg {
        #[serde(rename = "_id")]
        pub id: i64,
        pub time: DateTime,
        pub text: String,
        #[parent(on_delete = "cascade")]
        pub host: Ref<Host>,
    }

    /// The movies of the subset pattern: the listing's fields, and the details apart.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "movies")]
    pub struct Movie {
        #[serde(rename = "_id")]
        pub id: i64,
        pub title: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "movie_details", subset_of = "Movie")]
    pub struct MovieDetails {
        #[serde(rename = "_id")]
        pub id: i64,
        pub plot: String,
    }

    /// The library's subjects, a tree.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "subjects", tree(on_delete = "lift"))]
    pub struct Subject {
        #[serde(rename = "_id")]
        pub id: String,
        pub parent: Option<Ref<Subject>>,
        pub ancestors: Vec<Ref<Subject>>,
    }
}

fn raw(db: &TestDb, collection: &str) -> odm::mongodb::Collection<Document> {
    db.raw().collection::<Document>(collection)
}

/// Every event again from `position` (a restart before the position was stored): the follower
/// runs once more and `collections` are left exactly as they were. Returns its report.
async fn replayed_from(
    db: &TestDb,
    position: Bson,
    collections: &[&str],
) -> odm::Result<FollowerReport> {
    let before = futures_util::future::join_all(collections.iter().map(|c| stored(db, c))).await;
    raw(db, FOLLOWER)
        .update_one(
            doc! { "_id": "follower" },
            doc! { "$set": { "token": position } },
        )
        .await
        .expect("raw");
    let again = follow(db).await?;
    let after = futures_util::future::join_all(collections.iter().map(|c| stored(db, c))).await;
    assert_eq!(before, after, "replayed: {again:?}");
    Ok(again)
}

/// Runs a follower until it has nothing left, then stops it (its lease given up), as a job
/// would.
async fn follow(db: &TestDb) -> odm::Result<FollowerReport> {
    // ANCHOR: job
    let mut follower = db.odm().follower().max_wait(Duration::from_millis(100));
    let report = follower.run_until_idle().await?;
    follower.stop().await?;
    // ANCHOR_END: job
    Ok(report)
}

/// A follower started (its position stored) before the other program writes. The first run
/// stores the present as its position; on a busy machine the development server may place a
/// new stream's start just before the test's setup writes of a moment ago, which that run then
/// reads and applies (each again harmlessly). The position is known to be past the setup once
/// a run finds no event.
async fn started(db: &TestDb) -> odm::Result<()> {
    let mut report = follow(db).await?;
    for _ in 0..5 {
        if report.events == 0 {
            break;
        }
        report = follow(db).await?;
    }
    assert_eq!(report.events, 0);
    assert!(db.odm().follower_status().await?.started);
    Ok(())
}

#[tokio::test]
async fn raw_renames_of_parts_reach_every_copy() -> odm::Result<()> {
    const PARTS: i64 = 50;
    const PRODUCTS: i64 = 10_000;
    let db = common::db().await?;
    let parts: Vec<Document> = (0..PARTS)
        .map(|i| doc! { "_id": i, "name": format!("part {i}") })
        .collect();
    raw(&db, "parts")
        .insert_many(parts)
        .await
        .expect("raw insert");
    // 20,000 copies: two summaries per product, and no order copies yet.
    let products: Vec<Document> = (0..PRODUCTS)
        .map(|i| {
            let (a, b) = (i % PARTS, (i * 7 + 3) % PARTS);
            doc! { "_id": i, "parts": [
                { "id": a, "name": format!("part {a}") },
                { "id": b, "name": format!("part {b}") },
            ] }
        })
        .collect();
    for chunk in products.chunks(5_000) {
        raw(&db, "products")
            .insert_many(chunk.to_vec())
            .await
            .expect("raw insert");
    }
    started(&db).await?;

    // The other program: 1,000 renames of the 50 parts, from a client of its own, while the
    // follower runs.
    let uri = odm::testing::test_uri()?;
    let name = db.name().to_owned();
    let other = common::with_own_client(uri, move |client| async move {
        let parts = client.database(&name).collection::<Document>("parts");
        for round in 0..20 {
            for i in 0..PARTS {
                parts
                    .update_one(
                        doc! { "_id": i },
                        doc! { "$set": { "name": format!("part {i} r{round}") } },
                    )
                    .await
                    .expect("raw rename");
            }
        }
    });
    // ANCHOR: run
    let follower = db.odm().follower().max_wait(Duration::from_millis(100));
    let task = tokio::spawn(follower.run());
    // ANCHOR_END: run
    while !other.is_finished() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    other.join().expect("the other program");
    // ANCHOR: wait
    db.odm().wait_for_follower(Duration::from_secs(60)).await?;
    // ANCHOR_END: wait
    task.abort();

    let sources = stored(&db, "parts").await;
    assert!(
        sources
            .iter()
            .all(|d| d.get_str("name").is_ok_and(|n| n.ends_with("r19"))),
        "{sources:?}"
    );
    let copies = common::copies_equal(db.raw(), "parts", "products", "parts").await;
    assert_eq!(copies, 20_000);
    Ok(())
}

#[tokio::test]
async fn a_raw_change_of_another_field_is_passed_over() -> odm::Result<()> {
    let db = common::db().await?;
    raw(&db, "parts")
        .insert_one(doc! { "_id": 1, "name": "bolt", "weight": 3 })
        .await
        .expect("raw");
    raw(&db, "products")
        .insert_one(doc! { "_id": 1, "parts": [{ "id": 1, "name": "bolt" }] })
        .await
        .expect("raw");
    started(&db).await?;
    raw(&db, "parts")
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "weight": 4 } })
        .await
        .expect("raw");
    db.commands().clear();
    let report = follow(&db).await?;
    assert_eq!((report.events, report.relevant, report.cascaded), (1, 0, 0));
    // The lease, the stream, the position: nothing read or written elsewhere.
    let sent: Vec<String> = db
        .commands()
        .take()
        .into_iter()
        .map(|c| {
            let target = c
                .command
                .as_ref()
                .and_then(|d| d.get_str(&c.name).ok().map(str::to_owned));
            format!("{} {}", c.name, target.unwrap_or_default())
        })
        .collect();
    let allowed = [
        "findAndModify odm_follower",
        "aggregate ",
        "getMore ",
        "update odm_follower",
    ];
    assert!(
        sent.iter().all(|c| allowed.contains(&c.as_str())),
        "{sent:?}"
    );
    Ok(())
}

#[tokio::test]
async fn raw_deletes_apply_every_rule_and_report_restrict() -> odm::Result<()> {
    let db = common::db().await?;
    raw(&db, "parts")
        .insert_many((1..=3).map(|i| doc! { "_id": i as i64, "name": format!("part {i}") }))
        .await
        .expect("raw");
    raw(&db, "products")
        .insert_one(doc! { "_id": 1, "parts": [{ "id": 1_i64, "name": "part 1" }, { "id": 2_i64, "name": "part 2" }] })
        .await
        .expect("raw");
    raw(&db, "orders")
        .insert_one(doc! { "_id": 1, "part": 1_i64, "part_name": "part 1" })
        .await
        .expect("raw");
    raw(&db, "shelves")
        .insert_one(doc! { "_id": 1, "parts": [1_i64, 2_i64, 3_i64] })
        .await
        .expect("raw");
    raw(&db, "bins")
        .insert_many([
            doc! { "_id": 1, "part": 1_i64 },
            doc! { "_id": 2, "part": 3_i64 },
        ])
        .await
        .expect("raw");
    raw(&db, "audits")
        .insert_one(doc! { "_id": 1, "part": 1_i64 })
        .await
        .expect("raw");
    started(&db).await?;
    let position = token(&db).await;

    // ANCHOR: restrict
    raw(&db, "parts")
        .delete_one(doc! { "_id": 1 })
        .await
        .expect("raw delete");
    let report = follow(&db).await?;
    assert_eq!(report.deleted, 1);
    // pull of the summary, nullify (with the copy through it), pull of the id, cascade.
    assert_eq!(
        stored(&db, "products").await[0]
            .get_array("parts")
            .unwrap()
            .len(),
        1
    );
    let order = &stored(&db, "orders").await[0];
    assert_eq!(order.get("part"), Some(&Bson::Null));
    assert!(!order.contains_key("part_name"), "{order}");
    assert_eq!(
        stored(&db, "shelves").await[0].get_array("parts").unwrap(),
        &vec![Bson::Int64(2), Bson::Int64(3)]
    );
    let bins: Vec<i32> = stored(&db, "bins")
        .await
        .iter()
        .map(|b| b.get_i32("_id").unwrap())
        .collect();
    assert_eq!(bins, [2]);
    // restrict cannot refuse what is done: reported with the holders left.
    assert_eq!(report.violations.len(), 1, "{:?}", report.violations);
    let v = &report.violations[0];
    assert_eq!(
        (v.referenced_by.as_str(), v.path.as_str(), v.count),
        ("audits", "part", 1)
    );
    assert_eq!(stored(&db, "audits").await.len(), 1);
    // ANCHOR_END: restrict

    // Applying the same events again (a restart before the position was stored) changes
    // nothing.
    let collections = ["products", "orders", "shelves", "bins", "audits"];
    let again = replayed_from(&db, position, &collections).await?;
    assert_eq!((again.events, again.deleted), (1, 1));
    Ok(())
}

/// The follower's stored position, raw.
async fn token(db: &TestDb) -> Bson {
    raw(db, FOLLOWER)
        .find_one(doc! { "_id": "follower" })
        .await
        .expect("raw")
        .and_then(|d| d.get("token").cloned())
        .expect("a stored position")
}

async fn recent_ids(db: &TestDb, host: i64) -> Vec<i64> {
    let h = common::stored_one(db, "hosts", Bson::Int64(host))
        .await
        .expect("host");
    h.get_array("recent")
        .map(|a| {
            a.iter()
                .map(|s| s.as_document().unwrap().get_i64("_id").unwrap())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn raw_inserts_moves_and_deletes_of_messages_keep_latest_arrays_exact() -> odm::Result<()> {
    let db = common::db().await?;
    raw(&db, "hosts")
        .insert_many([
            doc! { "_id": 1_i64, "recent": [] },
            doc! { "_id": 2_i64, "recent": [] },
        ])
        .await
        .expect("raw");
    started(&db).await?;
    let at = |s: i64| DateTime::from_millis(1_700_000_000_000 + s * 1000);
    let msgs: Vec<Document> = (1..=6)
        .map(|i| doc! { "_id": i, "time": at(i), "text": format!("m{i}"), "host": 1_i64 })
        .collect();
    raw(&db, "logmsgs")
        .insert_many(msgs)
        .await
        .expect("raw insert");
    let report = follow(&db).await?;
    assert_eq!(report.events, 6);
    assert_eq!(recent_ids(&db, 1).await, [6, 5, 4]);

    // The newest leaves, one moves to the other host, an old one is renamed.
    raw(&db, "logmsgs")
        .delete_one(doc! { "_id": 6_i64 })
        .await
        .expect("raw");
    raw(&db, "logmsgs")
        .update_one(doc! { "_id": 5_i64 }, doc! { "$set": { "host": 2_i64 } })
        .await
        .expect("raw");
    raw(&db, "logmsgs")
        .update_one(doc! { "_id": 3_i64 }, doc! { "$set": { "text": "m3!" } })
        .await
        .expect("raw");
    follow(&db).await?;
    assert_eq!(recent_ids(&db, 1).await, [4, 3, 2]);
    assert_eq!(recent_ids(&db, 2).await, [5]);
    let h1 = common::stored_one(&db, "hosts", Bson::Int64(1))
        .await
        .expect("host");
    let texts: Vec<&str> = h1
        .get_array("recent")
        .unwrap()
        .iter()
        .map(|s| s.as_document().unwrap().get_str("text").unwrap())
        .collect();
    assert_eq!(texts, ["m4", "m3!", "m2"]);
    Ok(())
}

#[tokio::test]
async fn a_raw_move_of_a_subject_repairs_its_whole_subtree() -> odm::Result<()> {
    let db = common::db().await?;
    // science > physics > optics > lasers; arts.
    raw(&db, "subjects")
        .insert_many([
            doc! { "_id": "science", "parent": null, "ancestors": [] },
            doc! { "_id": "physics", "parent": "science", "ancestors": ["science"] },
            doc! { "_id": "optics", "parent": "physics", "ancestors": ["science", "physics"] },
            doc! { "_id": "lasers", "parent": "optics", "ancestors": ["science", "physics", "optics"] },
            doc! { "_id": "arts", "parent": null, "ancestors": [] },
        ])
        .await
        .expect("raw");
    started(&db).await?;
    // The other program moves physics under arts, writing only `parent`.
    raw(&db, "subjects")
        .update_one(
            doc! { "_id": "physics" },
            doc! { "$set": { "parent": "arts" } },
        )
        .await
        .expect("raw");
    let report = follow(&db).await?;
    assert_eq!(report.tree_nodes, 3);
    let ancestors = |d: &Document| -> Vec<String> {
        d.get_array("ancestors")
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap().to_owned())
            .collect()
    };
    let all = stored(&db, "subjects").await;
    let of = |id: &str| {
        ancestors(
            all.iter()
                .find(|d| d.get_str("_id").ok() == Some(id))
                .unwrap(),
        )
    };
    assert_eq!(of("physics"), ["arts"]);
    assert_eq!(of("optics"), ["arts", "physics"]);
    assert_eq!(of("lasers"), ["arts", "physics", "optics"]);
    assert_eq!(of("science"), Vec::<String>::new());
    // Following again writes nothing more.
    assert_eq!(follow(&db).await?.tree_nodes, 0);
    Ok(())
}

#[tokio::test]
async fn the_lag_is_counted_and_waited_for() -> odm::Result<()> {
    let db = common::db().await?;
    // Started first: a write acknowledged just before a change stream opens may or may not be
    // among its events on a busy server, and the lag counts each one.
    started(&db).await?;
    raw(&db, "parts")
        .insert_one(doc! { "_id": 1, "name": "bolt" })
        .await
        .expect("raw");
    for i in 0..5 {
        raw(&db, "parts")
            .update_one(
                doc! { "_id": 1 },
                doc! { "$set": { "name": format!("bolt {i}") } },
            )
            .await
            .expect("raw");
    }
    let status = db.odm().follower_status().await?;
    assert_eq!(status.behind, 6, "the insert and five updates");
    assert!(status.oldest.is_some());
    // No follower runs: the wait ends with the lag.
    let waited = db.odm().wait_for_follower(Duration::from_millis(200)).await;
    assert!(
        matches!(waited, Err(odm::Error::FollowerLag { behind: 6, .. })),
        "{waited:?}"
    );
    follow(&db).await?;
    let status = db.odm().follower_status().await?;
    assert_eq!((status.behind, status.applied), (0, 6));
    db.odm().wait_for_follower(Duration::from_secs(5)).await?;
    Ok(())
}

#[tokio::test]
async fn a_second_follower_waits_for_the_lease() -> odm::Result<()> {
    let db = common::db().await?;
    let mut first = db.odm().follower().max_wait(Duration::from_millis(50));
    first.run_until_idle().await?;
    let mut second = db.odm().follower().max_wait(Duration::from_millis(50));
    let report = second.run_until_idle().await?;
    assert!(report.elsewhere);
    first.stop().await?;
    let report = second.run_until_idle().await?;
    assert!(!report.elsewhere);
    Ok(())
}

#[tokio::test]
async fn a_standalone_server_has_no_change_streams() -> odm::Result<()> {
    let server = common::Standalone::start();
    let odm = odm::Odm::connect(&server.uri, "standalone_follower")
        .await?
        .with_catalog(common::catalog());
    let outcome = odm.follower().run_until_idle().await;
    assert!(
        matches!(&outcome, Err(odm::Error::ChangeStreamsUnavailable { reason }) if reason.contains("standalone")),
        "{outcome:?}"
    );
    Ok(())
}

/// Runs a follower of `odm` until idle, then stops it.
async fn run_once(odm: &odm::Odm) -> odm::Result<FollowerReport> {
    let mut follower = odm.follower().max_wait(Duration::from_millis(100));
    let report = follower.run_until_idle().await?;
    follower.stop().await?;
    Ok(report)
}

/// A server of its own that keeps the last 30 entries of its history: a follower away for
/// more writes than that finds its position gone (`ChangeStreamHistoryLost`).
#[tokio::test]
async fn a_position_older_than_the_history_is_swept() -> odm::Result<()> {
    let server = common::Standalone::start_with(&[
        "--oplog-max-entries",
        "30",
        "--noop-heartbeat-seconds",
        "1",
    ]);
    let odm = odm::Odm::connect(&server.uri, "follower_lost")
        .await?
        .with_catalog(common::catalog());
    let raw = |c: &str| odm.database().collection::<Document>(c);
    raw("parts")
        .insert_many([
            doc! { "_id": 1_i64, "name": "bolt" },
            doc! { "_id": 2_i64, "name": "nut" },
        ])
        .await
        .expect("raw");
    raw("products")
        .insert_one(doc! { "_id": 1, "parts": [{ "id": 1_i64, "name": "bolt" }] })
        .await
        .expect("raw");
    raw("orders")
        .insert_one(doc! { "_id": 1, "part": 2_i64, "part_name": "nut" })
        .await
        .expect("raw");
    run_once(&odm).await?;
    // Written while the follower was away, then pushed out of the history by 100 more writes.
    raw("parts")
        .update_one(
            doc! { "_id": 1_i64 },
            doc! { "$set": { "name": "zinc bolt" } },
        )
        .await
        .expect("raw");
    raw("parts")
        .delete_one(doc! { "_id": 2_i64 })
        .await
        .expect("raw");
    raw("movie_details")
        .insert_one(doc! { "_id": 9_i64, "plot": "no movie" })
        .await
        .expect("raw");
    for i in 0..100 {
        raw("noise")
            .insert_one(doc! { "_id": i })
            .await
            .expect("raw");
    }
    // The server trims its history on its own schedule.
    tokio::time::sleep(Duration::from_millis(2_500)).await;

    let report = run_once(&odm).await?;
    let lost = report
        .history_lost
        .clone()
        .unwrap_or_else(|| panic!("the loss is reported: {report:?}"));
    assert!(lost.copies.repairs >= 1, "{:?}", lost.copies);
    assert_eq!(lost.dangling, 1);
    let pairs: Vec<_> = lost
        .subsets
        .iter()
        .map(|r| (r.details, r.details_without_main.clone(), r.deleted))
        .collect();
    assert_eq!(pairs, [("movie_details", vec![Bson::Int64(9)], 1)]);
    assert!(raw("movie_details")
        .find_one(doc! { "_id": 9_i64 })
        .await
        .expect("raw")
        .is_none());
    let product = raw("products")
        .find_one(doc! {})
        .await
        .expect("raw")
        .expect("product");
    let summary = product.get_array("parts").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(summary.get_str("name").unwrap(), "zinc bolt");
    let order = raw("orders")
        .find_one(doc! {})
        .await
        .expect("raw")
        .expect("order");
    assert_eq!(order.get("part"), Some(&Bson::Null));
    // Following from the present: a later write is applied.
    raw("parts")
        .update_one(
            doc! { "_id": 1_i64 },
            doc! { "$set": { "name": "steel bolt" } },
        )
        .await
        .expect("raw");
    let report = run_once(&odm).await?;
    assert!(report.history_lost.is_none());
    assert_eq!(report.cascaded, 1);
    Ok(())
}

#[tokio::test]
#[ignore]
async fn follower_child() -> odm::Result<()> {
    let Ok(target) = std::env::var("ODM_FOLLOWER_CHILD") else {
        return Ok(());
    };
    let (uri, name) = target.split_once('|').expect("uri|database");
    let odm = odm::Odm::connect(uri, name)
        .await?
        .with_catalog(common::catalog());
    odm.follower()
        .batch_size(20)
        .lease(Duration::from_millis(600))
        .max_wait(Duration::from_millis(50))
        .run()
        .await?;
    Ok(())
}

/// A follower in a process of its own, killed with SIGKILL at a random point of a stream of
/// raw writes, three times: each restart goes on from the stored position, and at the end
/// every copy and every latest-N array is exact without any sweep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_follower_resumes_and_converges_without_a_sweep() -> odm::Result<()> {
    const PARTS: i64 = 20;
    let db = common::db().await?;
    raw(&db, "parts")
        .insert_many((0..PARTS).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    raw(&db, "products")
        .insert_many((0..2_000_i64).map(|i| {
            let a = i % PARTS;
            doc! { "_id": i, "parts": [{ "id": a, "name": format!("part {a}") }] }
        }))
        .await
        .expect("raw");
    raw(&db, "hosts")
        .insert_many((1..=4_i64).map(|i| doc! { "_id": i, "recent": [] }))
        .await
        .expect("raw");
    started(&db).await?;

    let uri = odm::testing::test_uri()?;
    let spawn = || {
        std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "follower::follower_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("ODM_FOLLOWER_CHILD", format!("{uri}|{}", db.name()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn the follower")
    };
    let name = db.name().to_owned();
    let other = common::with_own_client(uri.clone(), move |client| async move {
        let db = client.database(&name);
        for round in 0..30_i64 {
            for i in 0..PARTS {
                db.collection::<Document>("parts")
                    .update_one(
                        doc! { "_id": i },
                        doc! { "$set": { "name": format!("part {i} r{round}") } },
                    )
                    .await
                    .expect("raw rename");
            }
            let at = DateTime::from_millis(1_700_000_000_000 + round * 1000);
            db.collection::<Document>("logmsgs")
                .insert_one(doc! { "_id": round, "time": at, "text": format!("m{round}"), "host": round % 4 + 1 })
                .await
                .expect("raw insert");
            if round % 5 == 4 {
                db.collection::<Document>("logmsgs")
                    .delete_one(doc! { "_id": round - 2 })
                    .await
                    .expect("raw delete");
            }
        }
    });
    let mut seed = std::process::id() as u64;
    for _ in 0..3 {
        let mut child = spawn();
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        tokio::time::sleep(Duration::from_millis(150 + (seed >> 33) % 400)).await;
        child.kill().expect("SIGKILL");
        child.wait().expect("reaped");
    }
    other.join().expect("the other program");
    // A last follower, once the dead one's lease has expired.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut last = db.odm().follower().max_wait(Duration::from_millis(100));
    let report = last.run_until_idle().await?;
    assert!(report.history_lost.is_none());
    assert!(!report.elsewhere);
    last.stop().await?;

    // Every copy equals its source, read back raw.
    let names: std::collections::HashMap<i64, String> = stored(&db, "parts")
        .await
        .into_iter()
        .map(|d| {
            (
                d.get_i64("_id").unwrap(),
                d.get_str("name").unwrap().to_owned(),
            )
        })
        .collect();
    for p in stored(&db, "products").await {
        let s = p.get_array("parts").unwrap()[0]
            .as_document()
            .unwrap()
            .clone();
        assert_eq!(s.get_str("name").unwrap(), names[&s.get_i64("id").unwrap()]);
    }
    // Every latest-N array holds its host's three latest messages, each once.
    let messages = stored(&db, "logmsgs").await;
    for host in 1..=4_i64 {
        let mut expected: Vec<(i64, i64)> = messages
            .iter()
            .filter(|m| m.get_i64("host").ok() == Some(host))
            .map(|m| {
                (
                    m.get_datetime("time").unwrap().timestamp_millis(),
                    m.get_i64("_id").unwrap(),
                )
            })
            .collect();
        expected.sort();
        expected.reverse();
        let expected: Vec<i64> = expected.into_iter().take(3).map(|(_, id)| id).collect();
        assert_eq!(recent_ids(&db, host).await, expected, "host {host}");
    }
    Ok(())
}

#[tokio::test]
async fn a_raw_delete_of_a_movie_deletes_its_details() -> odm::Result<()> {
    let db = common::db().await?;
    raw(&db, "movies")
        .insert_many([
            doc! { "_id": 1_i64, "title": "Up" },
            doc! { "_id": 2_i64, "title": "Cars" },
        ])
        .await
        .expect("raw");
    raw(&db, "movie_details")
        .insert_many([
            doc! { "_id": 1_i64, "plot": "a house flies" },
            doc! { "_id": 2_i64, "plot": "cars race" },
        ])
        .await
        .expect("raw");
    started(&db).await?;
    raw(&db, "movies")
        .delete_one(doc! { "_id": 1_i64 })
        .await
        .expect("raw");
    let report = follow(&db).await?;
    assert_eq!(report.details_deleted, 1, "{report:?}");
    let left: Vec<i64> = stored(&db, "movie_details")
        .await
        .iter()
        .map(|d| d.get_i64("_id").unwrap())
        .collect();
    assert_eq!(left, [2]);
    Ok(())
}

#[tokio::test]
async fn one_follower_goes_on_across_runs() -> odm::Result<()> {
    let db = common::db().await?;
    raw(&db, "parts")
        .insert_many((0..10_i64).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    let mut follower = db.odm().follower().max_wait(Duration::from_millis(20));
    follower.run_until_idle().await?;
    for round in 0..4 {
        for i in 0..10_i64 {
            let name = format!("p{i} r{round}");
            if round % 2 == 0 {
                db.odm()
                    .update_by_id::<models::Part>(i, models::Part::name().set(name))
                    .await?;
            } else {
                raw(&db, "parts")
                    .update_one(doc! { "_id": i }, doc! { "$set": { "name": name } })
                    .await
                    .expect("raw");
            }
        }
        let report = follower.run_until_idle().await?;
        assert_eq!(report.events, 10, "round {round}: {report:?}");
    }
    Ok(())
}
