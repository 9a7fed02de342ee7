//! Bulk writes: a typed batch of any models' writes, each kept as its own operation keeps it
//! (copies cascaded, two-way parents listing their children), the writes of plain models
//! grouped into one command per run; ordered batches stop at the first failure, unordered
//! ones try every write; each failure named by its place. Everything read back raw.

#[path = "common/catalog.rs"]
mod catalog;
mod common;

use catalog::{Person, Task};
use common::{sent, stored, stored_one};
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;

/// A meter reading: a model nothing maintains.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bulk_meters")]
struct Meter {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique)]
    serial: String,
    reading: i64,
}

/// Seed 001's parts, whose names products copy.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bulk_parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bulk_products")]
struct Product {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[denormalize(from = "Part", fields = "name", max = 20)]
    parts: Vec<PartSummary>,
}

fn meter(id: i32) -> Meter {
    Meter {
        id,
        serial: format!("M-{id}"),
        reading: 0,
    }
}

#[tokio::test]
async fn the_writes_of_a_plain_model_are_one_command_per_run() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Meter>().await?;
    let meters: Vec<Meter> = (0..1_000).map(meter).collect();
    // ANCHOR: plain
    let mut bulk = db.odm().bulk();
    for m in &meters {
        bulk.insert(m);
    }
    for id in 0..500 {
        bulk.update_one(Meter::id_field().eq(id), Meter::reading().inc(5));
    }
    bulk.delete_many(Meter::id_field().gte(800));
    db.commands().clear();
    let written = bulk.await?;
    // ANCHOR_END: plain
    assert_eq!(sent(&db), ["insert", "update", "delete"]);
    assert_eq!(
        (
            written.inserted,
            written.matched,
            written.modified,
            written.deleted
        ),
        (1_000, 500, 500, 200)
    );
    let stored = stored(&db, "bulk_meters").await;
    assert_eq!(stored.len(), 800);
    let total: i64 = stored.iter().map(|d| d.get_i64("reading").unwrap()).sum();
    assert_eq!(total, 2_500);
    Ok(())
}

#[tokio::test]
async fn a_thousand_mixed_writes_keep_every_copy_and_two_way_list() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Meter>().await?;
    let parts: Vec<Part> = (0..20)
        .map(|id| Part {
            id,
            name: format!("part {id}"),
        })
        .collect();
    db.odm().insert_many(&parts).await?;
    let people: Vec<Person> = (0..5)
        .map(|n| Person {
            id: ObjectId::new(),
            name: format!("person {n}"),
            tasks: vec![],
        })
        .collect();
    db.odm().insert_many(&people).await?;
    // The products name their parts with stale names: the insert takes them from the parts.
    let products: Vec<Product> = (0..200)
        .map(|id| Product {
            id,
            name: format!("product {id}"),
            parts: (0..4)
                .map(|k| PartSummary {
                    id: Ref::new((id + k) % 20),
                    name: "stale".into(),
                })
                .collect(),
        })
        .collect();
    let tasks: Vec<Task> = (0..200)
        .map(|n| Task {
            id: ObjectId::new(),
            description: format!("task {n}"),
            due_date: DateTime::from_millis(0),
            owner: Ref::new(people[n % 5].id),
        })
        .collect();
    let meters: Vec<Meter> = (0..200).map(meter).collect();
    // ANCHOR: mixed
    let mut bulk = db.odm().bulk();
    for i in 0..200 {
        bulk.insert(&products[i]);
        bulk.insert(&tasks[i]);
        bulk.insert(&meters[i]);
        bulk.update_one(
            Part::id_field().eq((i % 20) as i64),
            Part::name().set(format!("part {} v{i}", i % 20)),
        );
        bulk.update_one(Meter::id_field().eq(i as i32), Meter::reading().inc(1));
    }
    assert_eq!(bulk.len(), 1_000);
    let written = bulk.await?;
    // ANCHOR_END: mixed
    assert_eq!(written.inserted, 600);
    assert_eq!((written.matched, written.modified), (400, 400));

    // Every copy is its part's last name, read back raw.
    let compared = common::copies_equal(db.raw(), "bulk_parts", "bulk_products", "parts").await;
    assert_eq!(compared, 800);
    let part = stored_one(&db, "bulk_parts", 7_i64).await.unwrap();
    assert_eq!(part.get_str("name").unwrap(), "part 7 v187");
    // Every task is listed by its owner, and by no other.
    for p in stored(&db, "people").await {
        let listed = p.get_array("tasks").unwrap().len();
        assert_eq!(listed, 40, "{p}");
    }
    let readings: i64 = stored(&db, "bulk_meters")
        .await
        .iter()
        .map(|d| d.get_i64("reading").unwrap())
        .sum();
    assert_eq!(readings, 200);
    Ok(())
}

#[tokio::test]
async fn ordered_stops_at_the_first_failure_unordered_tries_every_write() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Meter>().await?;
    let twin = Meter {
        id: 100,
        serial: "M-1".into(),
        reading: 0,
    };
    let (a, b, c) = (meter(1), meter(2), meter(3));
    let too_many = Product {
        id: 1,
        name: "overfull".into(),
        parts: (0..21)
            .map(|k| PartSummary {
                id: Ref::new(k),
                name: String::new(),
            })
            .collect(),
    };
    // Ordered: the duplicate serial stops the batch; the writes after it are not sent.
    let mut bulk = db.odm().bulk();
    bulk.insert(&a)
        .insert(&twin)
        .insert(&b)
        .delete_one(Meter::id_field().eq(1));
    let err = bulk.await.unwrap_err();
    let odm::Error::BulkWrite { written, failures } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(written.inserted, 1, "{err}");
    assert_eq!(failures.len(), 1, "{err}");
    assert_eq!(failures[0].index, 1);
    assert!(failures[0].is_duplicate_key(), "{err}");
    let ids: Vec<i32> = stored(&db, "bulk_meters")
        .await
        .iter()
        .map(|d| d.get_i32("_id").unwrap())
        .collect();
    assert_eq!(ids, [1]);

    // Unordered: every write is tried, each failure named by its place.
    let mut bulk = db.odm().bulk();
    bulk.insert(&b)
        .insert(&twin)
        .insert(&too_many)
        .insert(&c)
        .update_one(Meter::id_field().eq(2), Meter::reading().inc(1));
    let err = bulk.ordered(false).await.unwrap_err();
    let odm::Error::BulkWrite { written, failures } = &err else {
        panic!("{err:?}")
    };
    let places: Vec<usize> = failures.iter().map(|f| f.index).collect();
    assert_eq!(places, [1, 2], "{err}");
    assert!(matches!(
        failures[1].error.as_deref(),
        Some(odm::Error::BoundExceeded { .. })
    ));
    assert_eq!((written.inserted, written.modified), (2, 1), "{err}");
    let ids: Vec<i32> = stored(&db, "bulk_meters")
        .await
        .iter()
        .map(|d| d.get_i32("_id").unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3]);
    assert!(stored(&db, "bulk_products").await.is_empty());
    let raw = db.raw().collection::<Document>("bulk_meters");
    let two = raw.find_one(doc! { "_id": 2 }).await.unwrap().unwrap();
    assert_eq!(two.get_i64("reading").unwrap(), 1);
    Ok(())
}

#[tokio::test]
async fn a_document_past_16_mb_fails_alone_and_values_are_matched_literally() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Meter>().await?;
    let huge = Meter {
        id: 2,
        serial: "x".repeat(17 * 1024 * 1024),
        reading: 0,
    };
    // A serial that looks like an operator, and one like a pattern.
    let dollar = Meter {
        id: 3,
        serial: "$gt".into(),
        reading: 0,
    };
    let pattern = Meter {
        id: 4,
        serial: ".*".into(),
        reading: 0,
    };
    let (a, b) = (meter(1), meter(5));
    let mut bulk = db.odm().bulk();
    bulk.insert(&a)
        .insert(&huge)
        .insert(&dollar)
        .insert(&pattern)
        .insert(&b)
        .update_many(Meter::serial().eq("$gt"), Meter::reading().inc(7))
        .delete_many(Meter::serial().eq(".*"));
    db.commands().clear();
    let err = bulk.ordered(false).await.unwrap_err();
    let odm::Error::BulkWrite { written, failures } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(failures.len(), 1, "{err}");
    assert_eq!(failures[0].index, 1);
    assert!(failures[0].message.contains("16 MiB"), "{err}");
    assert_eq!(
        (written.inserted, written.modified, written.deleted),
        (4, 1, 1),
        "{err}"
    );
    // The inserts before and after it in their commands; nothing of the huge one sent.
    assert_eq!(sent(&db), ["insert", "insert", "update", "delete"]);
    let stored = stored(&db, "bulk_meters").await;
    let kept: Vec<(i32, i64)> = stored
        .iter()
        .map(|d| (d.get_i32("_id").unwrap(), d.get_i64("reading").unwrap()))
        .collect();
    assert_eq!(kept, [(1, 0), (3, 7), (5, 0)]);
    Ok(())
}

#[tokio::test]
async fn upserts_insert_what_no_document_matches_in_the_same_command() -> odm::Result<()> {
    let db = common::db().await?;
    let one = meter(1);
    db.odm().insert_one(&one).await?;
    let mut bulk = db.odm().bulk();
    bulk.upsert_one(Meter::id_field().eq(1), Meter::reading().inc(2))
        .upsert_one(Meter::id_field().eq(9), Meter::reading().inc(3));
    db.commands().clear();
    let written = bulk.await?;
    assert_eq!(sent(&db), ["update"]);
    assert_eq!(
        (written.matched, written.modified, written.upserted),
        (1, 1, 1)
    );
    let nine = stored_one(&db, "bulk_meters", 9).await.expect("upserted");
    assert_eq!(nine.get_i64("reading").unwrap(), 3);
    let one = stored_one(&db, "bulk_meters", 1).await.unwrap();
    assert_eq!(one.get_i64("reading").unwrap(), 2);
    Ok(())
}
