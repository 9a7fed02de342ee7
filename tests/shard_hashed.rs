//! A hashed shard key (`shard_key(keys = "user", hashed = "user")`, seed 004's "hash =
//! random" distribution): its index and `shardCollection` are hashed, the ODM's writes of a
//! loaded document pin it by equality (which a hashed key routes, as it does an `$in`), and
//! the routing report judges it as it does a ranged key. The handles' catalog is this file's
//! models, the only ones `sync_indexes` sees, and the development server has no
//! hashed indexes, which `sync_indexes` then reports as an error naming the index.

mod common;

use common::{sent_filter, stored_one};
use odm::bson::doc;
use odm::index::IndexKey;
use odm::prelude::*;
use odm::shard::{shard_collection_command, RoutingReport, ShardSync};

/// Uploads spread at random over the shards by their user.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "uploads", shard_key(keys = "user", hashed = "user"))]
struct Upload {
    #[serde(rename = "_id")]
    id: i32,
    user: String,
    name: String,
}

#[test]
fn the_key_and_its_index_are_hashed() {
    let key = <Upload as odm::Model>::entry().shard_key.unwrap();
    assert_eq!(key.key_document(), doc! { "user": "hashed" });
    assert_eq!(
        shard_collection_command("app", "uploads", &key),
        doc! { "shardCollection": "app.uploads", "key": { "user": "hashed" } }
    );
    let hashed: Vec<_> = <Upload as odm::Model>::indexes()
        .into_iter()
        .filter(|s| s.keys() == [("user".to_owned(), IndexKey::Hashed)])
        .collect();
    assert_eq!(hashed.len(), 1, "the key's index is declared hashed");
}

#[tokio::test]
async fn writes_of_a_loaded_document_pin_the_hashed_key_by_equality() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Upload {
        id: 1,
        user: "kate".into(),
        name: "cat.png".into(),
    })
    .await?;
    let mut loaded = odm.get::<Upload>(1).await?.unwrap();
    loaded.name = "kitten.png".into();
    db.commands().clear();
    odm.replace_one(&loaded).await?;
    assert_eq!(
        sent_filter(&db, "update", "uploads"),
        doc! { "_id": 1, "user": "kate" }
    );
    assert_eq!(
        stored_one(&db, "uploads", 1)
            .await
            .unwrap()
            .get_str("name")
            .unwrap(),
        "kitten.png"
    );
    db.commands().clear();
    assert_eq!(odm.delete_document(&loaded).await?, 1);
    assert_eq!(
        sent_filter(&db, "delete", "uploads"),
        doc! { "_id": 1, "user": "kate" }
    );
    assert!(stored_one(&db, "uploads", 1).await.is_none());
    Ok(())
}

#[test]
fn the_routing_report_routes_by_the_hashed_key() {
    let report = RoutingReport::in_catalog::<Upload>(&common::catalog());
    assert_eq!(report.key.as_deref(), Some("`user`"));
    let text = report.to_string();
    // A loaded document's writes name the key by equality, which a hashed key routes; a read by
    // `_id` alone scatters, as it does with a ranged key.
    for line in [
        "replace_one (save) of a loaded Upload is routed",
        "delete_document of a loaded Upload is routed",
        "get of Upload scatters: the filter lacks uploads' shard key `user`",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// On a server with hashed indexes (a real MongoDB through `MONGODB_URI`) `sync_indexes`
/// creates `user_hashed`; the development server refuses it, and the error is the sync report,
/// naming the collection and the index, with the server's reason.
#[tokio::test]
async fn sync_creates_the_hashed_index_or_reports_why_not() -> odm::Result<()> {
    let db = common::db().await?;
    match db.odm().sync_indexes().await {
        Ok(report) => {
            // Sharded on a `mongos` (by the hashed key), reported as not sharded elsewhere.
            let mongos = common::is_mongos(&db).await;
            let uploads = report
                .sharding
                .iter()
                .find(|s| match s {
                    ShardSync::Sharded { collection, .. }
                    | ShardSync::NotSharded { collection, .. } => collection == "uploads",
                    _ => false,
                })
                .expect("the collection's sharding");
            assert_eq!(
                matches!(uploads, ShardSync::Sharded { key, .. } if *key == doc! { "user": "hashed" }),
                mongos,
                "{uploads}"
            );
            let listed = common::listed_indexes(&db, "uploads").await;
            let hashed = listed
                .iter()
                .find(|i| i.get_str("name").ok() == Some("user_hashed"))
                .expect("the key's index");
            assert_eq!(
                hashed.get_document("key").ok(),
                Some(&doc! { "user": "hashed" })
            );
        }
        Err(odm::Error::IndexSync(report)) => {
            let uploads = report
                .collections
                .iter()
                .find(|c| c.collection == "uploads")
                .expect("the collection's report");
            let names: Vec<&str> = uploads.failed.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, ["user_hashed"], "{report:?}");
            assert!(uploads.failed[0].message.contains("hashed"), "{report:?}");
        }
        Err(other) => panic!("{other:?}"),
    }
    Ok(())
}
