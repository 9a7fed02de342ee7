//! What another program can leave that odm's own writes never do: latest-N arrays and tree
//! nodes malformed, a node deleted, one side of a subset pair inserted alone; and the lease on
//! the server's clock. Each is written raw by a client of its own, followed, and read back
//! raw. Two-way references are in `two_way.rs`.

use odm::bson::{doc, Bson, DateTime, Document};

use super::common;

mod models {
    use odm::prelude::*;

    /// A tree whose deletes take the subtree with them.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "folders", tree(on_delete = "cascade"))]
    pub struct Folder {
        #[serde(rename = "_id")]
        pub id: String,
        pub parent: Option<Ref<Folder>>,
        pub ancestors: Vec<Ref<Folder>>,
    }

    /// A tree whose deletes odm refuses while a node has children.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "regions", tree(on_delete = "restrict"))]
    pub struct Region {
        #[serde(rename = "_id")]
        pub id: String,
        pub parent: Option<Ref<Region>>,
        pub ancestors: Vec<Ref<Region>>,
    }
}

/// The other program: a driver client of its own on the test's database.
pub(super) async fn other_program(db: &odm::testing::TestDb) -> odm::mongodb::Database {
    let uri = odm::testing::test_uri().expect("the test server");
    let client = odm::mongodb::Client::with_uri_str(uri)
        .await
        .expect("the other program's client");
    client.database(db.name())
}

fn at(s: i64) -> DateTime {
    DateTime::from_millis(1_700_000_000_000 + s * 1000)
}

/// The latest three messages of `host` as the follower should have summarised them, from the
/// messages stored (read back raw).
async fn latest_expected(db: &odm::testing::TestDb, host: i64) -> Vec<Bson> {
    let mut msgs: Vec<Document> = super::stored(db, "logmsgs")
        .await
        .into_iter()
        .filter(|m| m.get_i64("host").ok() == Some(host))
        .collect();
    msgs.sort_by_key(|m| {
        std::cmp::Reverse((
            m.get_datetime("time").unwrap().timestamp_millis(),
            m.get_i64("_id").unwrap(),
        ))
    });
    msgs.into_iter()
        .take(3)
        .map(|m| {
            Bson::Document(doc! {
                "_id": m.get("_id").unwrap().clone(),
                "time": m.get("time").unwrap().clone(),
                "text": m.get("text").unwrap().clone(),
            })
        })
        .collect()
}

/// Latest-N arrays another program left malformed (not an array, elements that are no
/// summaries, a summary of the wrong types, no array at all): a raw insert or delete of a
/// message recomputes the host's array from the messages, whatever it held.
#[tokio::test]
async fn malformed_latest_arrays_are_recomputed_on_raw_inserts_and_deletes() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("hosts")
        .insert_many([
            doc! { "_id": 1_i64, "recent": "not an array" },
            doc! { "_id": 2_i64, "recent": ["junk", { "text": "no _id" }, 7] },
            doc! { "_id": 3_i64, "recent": [{ "_id": 30_i64, "time": "yesterday", "text": 5 }] },
            doc! { "_id": 4_i64 },
        ])
        .await
        .expect("raw");
    raw("logmsgs")
        .insert_many([
            doc! { "_id": 30_i64, "time": at(30), "text": "m30", "host": 3_i64 },
            doc! { "_id": 31_i64, "time": at(31), "text": "m31", "host": 3_i64 },
        ])
        .await
        .expect("raw");
    super::started(&db).await?;
    for host in [1_i64, 2, 4] {
        raw("logmsgs")
            .insert_many((0..4_i64).map(|i| {
                let id = host * 10 + i;
                doc! { "_id": id, "time": at(id), "text": format!("m{id}"), "host": host }
            }))
            .await
            .expect("raw");
    }
    // Host 3's array lists message 30 with the wrong types: its delete recomputes it.
    raw("logmsgs")
        .delete_one(doc! { "_id": 30_i64 })
        .await
        .expect("raw");
    let report = super::follow(&db).await?;
    assert!(report.bad_documents.is_empty(), "{report:?}");
    assert_eq!(report.latest_parents, 4, "{report:?}");
    for host in 1..=4_i64 {
        let stored = common::stored_one(&db, "hosts", Bson::Int64(host))
            .await
            .expect("host");
        assert_eq!(
            stored.get("recent"),
            Some(&Bson::Array(latest_expected(&db, host).await)),
            "host {host}"
        );
    }
    // Applied again, nothing changes.
    let before = super::stored(&db, "hosts").await;
    assert_eq!(super::follow(&db).await?.events, 0);
    assert_eq!(super::stored(&db, "hosts").await, before);
    Ok(())
}

/// Tree nodes another program gave a `parent` that is no node (an id of the wrong type, an
/// array, an id no node has): each is reported (collection, `_id`, `parent`) and left as it
/// is, with its subtree, while a good move of the same batch is applied and the position moves
/// on. A node moved under a parent whose own `ancestors` another program broke gets its
/// ancestors from the parent chain, the parent's repaired with it.
#[tokio::test]
async fn tree_nodes_with_malformed_parents_are_reported_and_the_rest_applied() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("subjects")
        .insert_many([
            doc! { "_id": "science", "parent": null, "ancestors": [] },
            doc! { "_id": "physics", "parent": "science", "ancestors": ["science"] },
            doc! { "_id": "optics", "parent": "physics", "ancestors": ["science", "physics"] },
            doc! { "_id": "lasers", "parent": "optics", "ancestors": ["science", "physics", "optics"] },
            doc! { "_id": "arts", "parent": null, "ancestors": [] },
            doc! { "_id": "music", "parent": "arts", "ancestors": ["arts"] },
            doc! { "_id": "jazz", "parent": "music", "ancestors": ["arts", "music"] },
            doc! { "_id": "math", "parent": "science", "ancestors": ["science"] },
            doc! { "_id": "algebra", "parent": "math", "ancestors": ["science", "math"] },
        ])
        .await
        .expect("raw");
    raw("subjects")
        .update_one(
            doc! { "_id": "math" },
            doc! { "$set": { "ancestors": "junk" } },
        )
        .await
        .expect("raw");
    super::started(&db).await?;
    let set_parent = |id: &'static str, parent: Bson| {
        let subjects = raw("subjects");
        async move {
            subjects
                .update_one(doc! { "_id": id }, doc! { "$set": { "parent": parent } })
                .await
                .expect("raw");
        }
    };
    set_parent("optics", Bson::Int64(42)).await;
    set_parent("jazz", Bson::Array(vec![Bson::from("arts")])).await;
    set_parent("music", Bson::from("no such subject")).await;
    // A good move in the same batch.
    set_parent("algebra", Bson::from("arts")).await;
    // A node inserted under a parent whose own ancestors were broken before the follower
    // started.
    raw("subjects")
        .insert_one(doc! { "_id": "geometry", "parent": "math" })
        .await
        .expect("raw");
    let before = super::stored(&db, "subjects").await;
    let report = super::follow(&db).await?;
    let mut bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    bad.sort();
    assert_eq!(
        bad,
        [
            ("subjects", "{ _id: \"jazz\" }", "parent"),
            ("subjects", "{ _id: \"music\" }", "parent"),
            ("subjects", "{ _id: \"optics\" }", "parent"),
        ],
        "{report:?}"
    );
    let after = super::stored(&db, "subjects").await;
    let ancestors = |all: &[Document], id: &str| {
        all.iter()
            .find(|d| d.get_str("_id").ok() == Some(id))
            .and_then(|d| d.get("ancestors").cloned())
    };
    // The malformed nodes and their subtrees are left as they were.
    for id in ["optics", "lasers", "jazz", "music"] {
        assert_eq!(ancestors(&after, id), ancestors(&before, id), "{id}");
    }
    assert_eq!(ancestors(&after, "algebra"), Some(Bson::from(vec!["arts"])));
    assert_eq!(ancestors(&after, "math"), Some(Bson::from(vec!["science"])));
    assert_eq!(
        ancestors(&after, "geometry"),
        Some(Bson::from(vec!["science", "math"]))
    );
    // The position moved on: nothing is read or reported again.
    let again = super::follow(&db).await?;
    assert_eq!((again.events, again.bad_documents.len()), (0, 0));
    Ok(())
}

/// The commands sent, as `name collection`, of those naming one of `collections`.
pub(super) fn sent_to(db: &odm::testing::TestDb, collections: &[&str]) -> Vec<String> {
    db.commands()
        .take()
        .into_iter()
        .filter_map(|c| {
            let target = c.command.as_ref()?.get_str(&c.name).ok()?.to_owned();
            collections
                .contains(&target.as_str())
                .then(|| format!("{} {target}", c.name))
        })
        .collect()
}

/// Another program deletes tree nodes: the follower applies the tree's rule (`lift` here) as
/// odm's delete would, without the tree's sweep: the deleted nodes leave every descendant's
/// ancestors and their children take the nearest ancestor left; a child whose `ancestors` is
/// not an array is reported and left. Applied twice, nothing changes.
#[tokio::test]
async fn a_raw_delete_of_a_tree_node_lifts_its_subtree() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("subjects")
        .insert_many([
            doc! { "_id": "science", "parent": null, "ancestors": [] },
            doc! { "_id": "physics", "parent": "science", "ancestors": ["science"] },
            doc! { "_id": "optics", "parent": "physics", "ancestors": ["science", "physics"] },
            doc! { "_id": "lasers", "parent": "optics", "ancestors": ["science", "physics", "optics"] },
            doc! { "_id": "acoustics", "parent": "physics", "ancestors": ["science", "physics"] },
            // Its ancestors broken by another program: they cannot tell whom it goes under.
            doc! { "_id": "sound", "parent": "physics", "ancestors": "junk" },
            doc! { "_id": "arts", "parent": null, "ancestors": [] },
            doc! { "_id": "music", "parent": "arts", "ancestors": ["arts"] },
        ])
        .await
        .expect("raw");
    super::started(&db).await?;
    let position = super::token(&db).await;
    // ANCHOR: tree_delete
    raw("subjects")
        .delete_one(doc! { "_id": "physics" })
        .await
        .expect("raw");
    raw("subjects")
        .delete_one(doc! { "_id": "arts" })
        .await
        .expect("raw");
    db.commands().clear();
    let report = super::follow(&db).await?;
    // Two deletes, one command of each kind for the pair: the pull, then the reparent.
    let updates: Vec<String> = sent_to(&db, &["subjects"])
        .into_iter()
        .filter(|c| c.starts_with("update"))
        .collect();
    assert_eq!(
        updates,
        ["update subjects", "update subjects"],
        "{report:?}"
    );
    assert_eq!(report.tree_nodes, 4, "{report:?}");
    let all = super::stored(&db, "subjects").await;
    let node = |id: &str| {
        let d = all
            .iter()
            .find(|d| d.get_str("_id").ok() == Some(id))
            .unwrap_or_else(|| panic!("{id}"));
        (
            d.get("parent").cloned().unwrap(),
            d.get("ancestors").cloned().unwrap(),
        )
    };
    assert_eq!(
        node("optics"),
        (Bson::from("science"), Bson::from(vec!["science"]))
    );
    assert_eq!(
        node("acoustics"),
        (Bson::from("science"), Bson::from(vec!["science"]))
    );
    assert_eq!(
        node("lasers"),
        (Bson::from("optics"), Bson::from(vec!["science", "optics"]))
    );
    assert_eq!(node("music"), (Bson::Null, Bson::Array(vec![])));
    assert_eq!(node("sound"), (Bson::from("physics"), Bson::from("junk")));
    let bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    assert_eq!(bad, [("subjects", "{ _id: \"sound\" }", "ancestors")]);
    // ANCHOR_END: tree_delete

    let again = super::replayed_from(&db, position, &["subjects"]).await?;
    assert_eq!(again.tree_nodes, 0, "{again:?}");
    Ok(())
}

/// Another program writes one side of a subset pair alone: details without their movie are
/// deleted (as the pair's repair deletes them), a movie inserted without details, or whose
/// details were deleted, is reported; details whose movie follows within the pause (odm's own
/// pair insert without a transaction writes the details first) are kept.
#[tokio::test]
async fn one_side_of_a_subset_pair_written_alone_is_finished() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("movies")
        .insert_one(doc! { "_id": 1_i64, "title": "Up" })
        .await
        .expect("raw");
    raw("movie_details")
        .insert_one(doc! { "_id": 1_i64, "plot": "a house flies" })
        .await
        .expect("raw");
    super::started(&db).await?;

    // ANCHOR: pair
    raw("movie_details")
        .insert_one(doc! { "_id": 2_i64, "plot": "no movie" })
        .await
        .expect("raw");
    db.commands().clear();
    let report = super::follow(&db).await?;
    assert_eq!(report.details_deleted, 1, "{report:?}");
    // Looked at, looked at again after the pause, deleted; then the follower's own delete,
    // read back from the stream, finds the pair gone.
    assert_eq!(
        sent_to(&db, &["movies", "movie_details"]),
        [
            "find movies",
            "find movie_details",
            "find movies",
            "find movie_details",
            "delete movie_details",
            "find movie_details",
            "find movies",
        ]
    );
    assert!(common::stored_one(&db, "movie_details", Bson::Int64(2))
        .await
        .is_none());
    // ANCHOR_END: pair

    raw("movies")
        .insert_one(doc! { "_id": 3_i64, "title": "Cars" })
        .await
        .expect("raw");
    raw("movie_details")
        .delete_one(doc! { "_id": 1_i64 })
        .await
        .expect("raw");
    // A pair written details first, its movie 100 ms later.
    raw("movie_details")
        .insert_one(doc! { "_id": 4_i64, "plot": "a robot tidies" })
        .await
        .expect("raw");
    let movies = raw("movies");
    let late = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        movies
            .insert_one(doc! { "_id": 4_i64, "title": "Wall-E" })
            .await
            .expect("raw");
    });
    let report = super::follow(&db).await?;
    late.await.expect("the late movie");
    let mut bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    bad.sort();
    assert_eq!(
        bad,
        [
            ("movies", "{ _id: 1 }", "_id"),
            ("movies", "{ _id: 3 }", "_id")
        ],
        "{report:?}"
    );
    assert_eq!(report.details_deleted, 0, "{report:?}");
    assert!(common::stored_one(&db, "movie_details", Bson::Int64(4))
        .await
        .is_some());
    Ok(())
}

/// Whether `value` holds a date anywhere.
fn holds_a_date(value: &Bson) -> bool {
    match value {
        Bson::DateTime(_) => true,
        Bson::Document(d) => d.values().any(holds_a_date),
        Bson::Array(a) => a.iter().any(holds_a_date),
        _ => false,
    }
}

/// The lease is set and compared on the server's clock: the commands taking and extending it
/// carry no time of the follower's (a follower whose clock runs ahead has nothing to compare a
/// held lease with), the stored end is the server's time plus the lease, and a second follower
/// waits until the first gives the lease up.
#[tokio::test]
async fn the_lease_runs_on_the_servers_clock() -> odm::Result<()> {
    let db = common::db().await?;
    db.commands().clear();
    let mut first = db
        .odm()
        .follower()
        .lease(std::time::Duration::from_secs(60))
        .max_wait(std::time::Duration::from_millis(50));
    first.run_until_idle().await?;
    let lease_commands: Vec<Document> = db
        .commands()
        .take()
        .into_iter()
        .filter_map(|c| c.command)
        .filter(|c| {
            ["findAndModify", "update"]
                .iter()
                .any(|n| c.get_str(*n).ok() == Some(odm::follower::FOLLOWER))
        })
        .collect();
    assert!(lease_commands.len() >= 2, "{lease_commands:?}");
    for c in &lease_commands {
        assert!(
            !holds_a_date(&Bson::Document(c.clone())),
            "a client time sent: {c}"
        );
    }
    let hello = db
        .raw()
        .run_command(doc! { "hello": 1 })
        .await
        .expect("hello");
    let server_now = hello
        .get_datetime("localTime")
        .map(|t| t.timestamp_millis())
        .expect("the server's time");
    let stored = db
        .raw()
        .collection::<Document>(odm::follower::FOLLOWER)
        .find_one(doc! { "_id": "follower" })
        .await
        .expect("raw")
        .expect("the follower's document");
    let until = stored
        .get_datetime("lease")
        .expect("lease")
        .timestamp_millis();
    assert!(
        (until - (server_now + 60_000)).abs() < 5_000,
        "lease ends at {until}, the server's time is {server_now}"
    );
    let mut second = db
        .odm()
        .follower()
        .max_wait(std::time::Duration::from_millis(50));
    assert!(second.run_until_idle().await?.elsewhere);
    first.stop().await?;
    assert!(!second.run_until_idle().await?.elsewhere);
    second.stop().await?;
    Ok(())
}

/// The other rules of a tree's deletes: under `cascade` a raw delete of a folder deletes its
/// subtree; under `restrict` (which cannot refuse what is done) the children left under a
/// deleted region are reported and left as they are.
#[tokio::test]
async fn raw_deletes_of_tree_nodes_cascade_or_are_reported() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    let chain = |ids: [&str; 4]| {
        (0..4)
            .map(|i| {
                let parent = if i == 0 {
                    Bson::Null
                } else {
                    Bson::from(ids[i - 1])
                };
                doc! { "_id": ids[i], "parent": parent, "ancestors": ids[..i].to_vec() }
            })
            .collect::<Vec<_>>()
    };
    raw("folders")
        .insert_many(chain(["home", "docs", "work", "drafts"]))
        .await
        .expect("raw");
    raw("regions")
        .insert_many(chain(["europe", "france", "brittany", "rennes"]))
        .await
        .expect("raw");
    super::started(&db).await?;
    raw("folders")
        .delete_one(doc! { "_id": "docs" })
        .await
        .expect("raw");
    raw("regions")
        .delete_one(doc! { "_id": "france" })
        .await
        .expect("raw");
    let report = super::follow(&db).await?;
    assert_eq!(report.tree_deleted, 2, "{report:?}");
    let ids = |docs: Vec<Document>| -> Vec<String> {
        docs.iter()
            .map(|d| d.get_str("_id").unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(super::stored(&db, "folders").await), ["home"]);
    assert_eq!(
        ids(super::stored(&db, "regions").await),
        ["brittany", "europe", "rennes"]
    );
    let v: Vec<(&str, &str, &str, u64)> = report
        .violations
        .iter()
        .map(|v| {
            (
                v.collection.as_str(),
                v.referenced_by.as_str(),
                v.path.as_str(),
                v.count,
            )
        })
        .collect();
    assert_eq!(v, [("regions", "regions", "parent", 1)]);
    // Named, as well as counted: the deleted region and the child left under it.
    let v = &report.violations[0];
    assert_eq!(v.deleted(), [Bson::from("france")]);
    assert_eq!(v.holders(), [Bson::from("brittany")]);
    Ok(())
}
