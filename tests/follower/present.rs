//! A delete event says what was true when it was written. Another program that deletes a
//! document, then inserts one with the same `_id`, must find it there after the follower ran:
//! its delete rules, its subset details, its subtree and its latest-N summary are kept, in one
//! batch or two, and when the events are read again. Each check is one `find` of the ids per
//! collection and batch.

use std::time::Duration;

use odm::bson::{doc, Bson, DateTime, Document};
use odm::follower::FollowerReport;

use super::common;
use super::gaps::{other_program, sent_to};

/// Runs a follower applying `batch` events at a time until idle, then stops it.
async fn follow_by(db: &odm::testing::TestDb, batch: u32) -> odm::Result<FollowerReport> {
    let mut follower = db
        .odm()
        .follower()
        .batch_size(batch)
        .max_wait(Duration::from_millis(100));
    let report = follower.run_until_idle().await?;
    follower.stop().await?;
    Ok(report)
}

/// The `_id`s of `collection`, read back raw.
async fn ids(db: &odm::testing::TestDb, collection: &str) -> Vec<Bson> {
    super::stored(db, collection)
        .await
        .iter()
        .filter_map(|d| d.get("_id").cloned())
        .collect()
}

/// A part with a cascade, a summary and a pull hanging on it, a movie with its details, a
/// folder (a tree that cascades) with its subtree, a log message in its host's latest three:
/// each deleted and inserted again by another program, then followed in batches of `batch`.
async fn deleted_and_inserted_again(batch: u32) -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    let part = doc! { "_id": 100_i64, "name": "vendor 100" };
    let movie = doc! { "_id": 7_i64, "title": "Up" };
    let folder = doc! { "_id": "docs", "parent": null, "ancestors": [] };
    let at = DateTime::from_millis(1_700_000_000_000);
    let msg = doc! { "_id": 5_i64, "time": at, "text": "boot", "host": 1_i64 };
    raw("parts").insert_one(part.clone()).await.expect("raw");
    raw("bins")
        .insert_many([
            doc! { "_id": 1, "part": 100_i64 },
            doc! { "_id": 2, "part": 100_i64 },
        ])
        .await
        .expect("raw");
    raw("shelves")
        .insert_one(doc! { "_id": 1, "parts": [100_i64] })
        .await
        .expect("raw");
    raw("products")
        .insert_one(doc! { "_id": 1, "parts": [{ "id": 100_i64, "name": "vendor 100" }] })
        .await
        .expect("raw");
    raw("movies").insert_one(movie.clone()).await.expect("raw");
    raw("movie_details")
        .insert_one(doc! { "_id": 7_i64, "plot": "a house flies" })
        .await
        .expect("raw");
    raw("folders")
        .insert_one(folder.clone())
        .await
        .expect("raw");
    raw("folders")
        .insert_one(doc! { "_id": "guides", "parent": "docs", "ancestors": ["docs"] })
        .await
        .expect("raw");
    raw("hosts")
        .insert_one(doc! { "_id": 1_i64, "recent": [{ "_id": 5_i64, "time": at, "text": "boot" }] })
        .await
        .expect("raw");
    raw("logmsgs").insert_one(msg.clone()).await.expect("raw");
    super::started(&db).await?;
    let position = super::token(&db).await;
    let before = [
        "parts",
        "bins",
        "shelves",
        "products",
        "movies",
        "movie_details",
        "folders",
        "hosts",
        "logmsgs",
    ];
    let kept = futures_util::future::join_all(before.iter().map(|c| super::stored(&db, c))).await;

    // ANCHOR: reinserted
    // The other program deletes each one, then inserts it again.
    for (collection, d) in [
        ("parts", &part),
        ("movies", &movie),
        ("folders", &folder),
        ("logmsgs", &msg),
    ] {
        let id = d.get("_id").cloned().expect("an id");
        raw(collection)
            .delete_one(doc! { "_id": id })
            .await
            .expect("raw delete");
        raw(collection)
            .insert_one(d.clone())
            .await
            .expect("raw insert");
    }
    db.commands().clear();
    let report = follow_by(&db, batch).await?;
    // Nothing the deletes hung on was touched: the ids are there now.
    assert_eq!(report.deleted, 0, "{report:?}");
    assert_eq!((report.details_deleted, report.tree_deleted), (0, 0));
    // ANCHOR_END: reinserted
    let sent = sent_to(&db, &before);
    assert!(
        !sent.iter().any(|c| c.starts_with("delete")),
        "batches of {batch}: {sent:?}"
    );
    let now = futures_util::future::join_all(before.iter().map(|c| super::stored(&db, c))).await;
    assert_eq!(now, kept, "batches of {batch}: {report:?}");

    // The same events read again (a restart before the position was stored): still nothing.
    let again = super::replayed_from(&db, position, &before).await?;
    assert_eq!(again.deleted, 0, "{again:?}");
    Ok(())
}

/// The delete and the insert in one batch.
#[tokio::test]
async fn a_document_deleted_and_inserted_again_in_one_batch_is_kept() -> odm::Result<()> {
    deleted_and_inserted_again(500).await
}

/// The delete and the insert in batches of their own: when the delete's batch is applied, the
/// document is there again.
#[tokio::test]
async fn a_document_deleted_and_inserted_again_across_batches_is_kept() -> odm::Result<()> {
    deleted_and_inserted_again(1).await
}

/// A delete followed and applied, then the document inserted again and the delete's event read
/// again (a restart before its position was stored): the new document and the children it was
/// given are kept. Deleted ids are checked with one `find` per collection and batch, never
/// one per event, and the deleted documents themselves are never deleted again.
#[tokio::test]
async fn a_replayed_delete_leaves_the_document_inserted_since() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("parts")
        .insert_many((1..=50_i64).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    raw("bins")
        .insert_many((1..=50_i64).map(|i| doc! { "_id": i, "part": i }))
        .await
        .expect("raw");
    super::started(&db).await?;
    let position = super::token(&db).await;
    raw("parts")
        .delete_many(doc! { "_id": { "$lte": 50_i64 } })
        .await
        .expect("raw delete");
    db.commands().clear();
    let report = super::follow(&db).await?;
    assert_eq!(report.deleted, 50, "{report:?}");
    // One check of the 50 ids, then the cascade: the parts themselves are not deleted again.
    let sent = sent_to(&db, &["parts", "bins"]);
    let finds = sent.iter().filter(|c| *c == "find parts").count();
    assert_eq!(finds, 1, "{sent:?}");
    assert!(!sent.contains(&"delete parts".to_owned()), "{sent:?}");
    assert!(ids(&db, "bins").await.is_empty());

    // Part 3 comes back, with a bin of its own.
    raw("parts")
        .insert_one(doc! { "_id": 3_i64, "name": "part 3 again" })
        .await
        .expect("raw");
    raw("bins")
        .insert_one(doc! { "_id": 300, "part": 3_i64 })
        .await
        .expect("raw");
    super::follow(&db).await?;
    let again = super::replayed_from(&db, position, &["parts", "bins"]).await?;
    assert_eq!(again.deleted, 49, "{again:?}");
    assert_eq!(ids(&db, "parts").await, [Bson::Int64(3)]);
    assert_eq!(ids(&db, "bins").await, [Bson::Int32(300)]);
    Ok(())
}
