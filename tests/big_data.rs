//! Operations whose id lists pass MongoDB's 16 MB command limit: 5,000 labels with 4,000-byte
//! ids (about 20 MB of ids; long ids rather than many, which keeps the test quick). Each operation completes, sends its `$in` lists in chunks under
//! the limit, and leaves the right documents behind.

#[path = "common/bulk.rs"]
mod bulk;
mod common;

use bulk::labels::{Label, LabelCard, Shelf, Tag};
use common::stored;
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;

const LABELS: usize = 5_000;
const PER_SHELF: usize = 100;

/// A 4,000-byte id whose first bytes tell it from the others, so that the server compares ids
/// quickly.
fn label_id(n: usize) -> String {
    format!("{n:06}{}", "-".repeat(3_994))
}

/// The labels, written with the raw driver (the driver splits the insert).
async fn labels(db: &TestDb, name: &str) {
    let docs: Vec<Document> = (0..LABELS)
        .map(|n| doc! { "_id": label_id(n), "name": format!("{name} {n}") })
        .collect();
    db.raw()
        .collection::<Document>("labels")
        .insert_many(docs)
        .await
        .expect("raw insert of labels");
}

/// Shelves of `PER_SHELF` cards each, covering every label, written with the raw driver.
async fn raw_shelves(db: &TestDb, name: &str) {
    let docs: Vec<Document> = (0..LABELS / PER_SHELF)
        .map(|s| {
            let cards: Vec<Bson> = (s * PER_SHELF..(s + 1) * PER_SHELF)
                .map(|n| Bson::Document(doc! { "id": label_id(n), "name": format!("{name} {n}") }))
                .collect();
            doc! { "_id": s as i32, "labels": cards }
        })
        .collect();
    db.raw()
        .collection::<Document>("shelves")
        .insert_many(docs)
        .await
        .expect("raw insert of shelves");
}

/// `(label number, name)` of every card of every stored shelf.
async fn cards(db: &TestDb) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for shelf in stored(db, "shelves").await {
        for card in shelf.get_array("labels").unwrap() {
            let card = card.as_document().unwrap();
            let n: usize = card.get_str("id").unwrap()[..6].parse().unwrap();
            out.push((n, card.get_str("name").unwrap().to_owned()));
        }
    }
    out.sort();
    out
}

/// The largest command sent since the last take, in bytes, and the commands by name.
fn commands(db: &TestDb) -> (usize, Vec<String>) {
    let mut largest = 0;
    let mut names = Vec::new();
    for c in db.commands().take() {
        // An insert's documents travel as a document sequence, which may hold 48 MB; the
        // driver splits it.
        if c.name == "insert" {
            names.push(c.name);
            continue;
        }
        if let Some(doc) = &c.command {
            largest = largest.max(odm::bson::serialize_to_vec(doc).unwrap().len());
        }
        names.push(c.name);
    }
    (largest, names)
}

fn count(names: &[String], name: &str) -> usize {
    names.iter().filter(|n| *n == name).count()
}

/// How many chunks 5,000 ids of 4,000 bytes take: about 20 MB of ids, at most 8 MiB a chunk.
const CHUNKS: usize = 3;

#[tokio::test]
async fn inserting_copies_of_20_mb_of_sources_reads_them_in_chunks() -> odm::Result<()> {
    let db = common::db().await?;
    labels(&db, "label").await;
    let shelves: Vec<Shelf> = (0..LABELS / PER_SHELF)
        .map(|s| Shelf {
            id: s as i32,
            labels: (s * PER_SHELF..(s + 1) * PER_SHELF)
                .map(|n| LabelCard {
                    id: Ref::new(label_id(n)),
                    name: "stale".into(),
                })
                .collect(),
        })
        .collect();
    db.commands().clear();

    db.odm().insert_many(&shelves).await?;

    let (largest, names) = commands(&db);
    assert!(largest < odm::batch::MAX_COMMAND_BYTES, "{largest}");
    // The copies taken (one `find` per chunk), then re-read once the insert landed.
    assert_eq!(count(&names, "find"), 2 * CHUNKS, "{names:?}");
    let got = cards(&db).await;
    assert_eq!(got.len(), LABELS);
    for (n, name) in got {
        assert_eq!(name, format!("label {n}"));
    }
    Ok(())
}

#[tokio::test]
async fn an_update_of_20_mb_of_sources_cascades_in_chunks() -> odm::Result<()> {
    let db = common::db().await?;
    labels(&db, "old").await;
    raw_shelves(&db, "old").await;
    db.commands().clear();

    let result = db
        .odm()
        .update_many(Filter::<Label>::all(), Label::name().set("new"))
        .transaction(odm::TransactionMode::Never)
        .await?;

    assert_eq!(result.modified_count, LABELS as u64);
    let (largest, names) = commands(&db);
    assert!(largest < odm::batch::MAX_COMMAND_BYTES, "{largest}");
    // The labels updated per chunk of ids; the cascade to the tags the same; the cascade to
    // the shelves repeats the ids in its filter and array filter, so it takes more (4 MiB of
    // ids each).
    assert_eq!(count(&names, "update"), CHUNKS + CHUNKS + 5, "{names:?}");
    let got = cards(&db).await;
    assert_eq!(got.len(), LABELS);
    assert!(got.iter().all(|(_, name)| name == "new"));
    Ok(())
}

#[tokio::test]
async fn a_delete_of_20_mb_of_ids_applies_every_rule() -> odm::Result<()> {
    let db = common::db().await?;
    labels(&db, "label").await;
    raw_shelves(&db, "label").await;
    let tags: Vec<Document> = (0..LABELS)
        .step_by(4)
        .map(|n| doc! { "_id": format!("t{n}"), "label": label_id(n), "label_name": format!("label {n}") })
        .collect();
    db.raw()
        .collection::<Document>("tags")
        .insert_many(tags)
        .await
        .expect("raw insert of tags");
    db.commands().clear();

    let deleted = db.odm().delete_many(Filter::<Label>::all()).await?;

    assert_eq!(deleted, LABELS as u64);
    let (largest, names) = commands(&db);
    assert!(largest < odm::batch::MAX_COMMAND_BYTES, "{largest}");
    assert_eq!(count(&names, "delete"), CHUNKS, "{names:?}");
    // Too large for one transaction: planned in one, which is abandoned, then run in batches.
    assert_eq!(count(&names, "abortTransaction"), 1, "{names:?}");
    assert_eq!(count(&names, "commitTransaction"), 0, "{names:?}");
    assert!(stored(&db, "labels").await.is_empty());
    for shelf in stored(&db, "shelves").await {
        assert_eq!(shelf.get_array("labels").unwrap().len(), 0, "{shelf}");
    }
    let tags = stored(&db, "tags").await;
    assert_eq!(tags.len(), LABELS / 4);
    for tag in tags {
        assert_eq!(tag.get("label"), Some(&Bson::Null), "{tag}");
        assert!(!tag.contains_key("label_name"), "{tag}");
    }
    Ok(())
}

#[tokio::test]
async fn a_sweep_over_20_mb_of_sources_reads_them_in_chunks() -> odm::Result<()> {
    let db = common::db().await?;
    labels(&db, "label").await;
    raw_shelves(&db, "label").await;
    let shelves = db.raw().collection::<Document>("shelves");
    for (shelf, card) in [(0, 0), (49, 99)] {
        shelves
            .update_one(
                doc! { "_id": shelf },
                doc! { "$set": { format!("labels.{card}.name"): "stale" } },
            )
            .await
            .expect("raw update");
    }
    db.commands().clear();

    let report = db.odm().verify_copies().of::<Shelf>().repair(true).await?;

    assert_eq!(report.issues.len(), 2, "{report}");
    assert_eq!(report.repairs, 2, "{report}");
    let (largest, names) = commands(&db);
    assert!(largest < odm::batch::MAX_COMMAND_BYTES, "{largest}");
    // The shelves in one batch, the labels they copy in chunks, two repairs.
    assert_eq!(count(&names, "find"), 1 + CHUNKS, "{names:?}");
    for (n, name) in cards(&db).await {
        assert_eq!(name, format!("label {n}"));
    }
    Ok(())
}

/// The tags' model takes part in the delete rules of labels.
#[allow(dead_code)]
fn tag_is_linked(t: Tag) -> Tag {
    t
}
