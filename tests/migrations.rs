//! Schema versions and migrations against the server: `_v` written by every insert and
//! replacement, old documents upgraded on read (and not written back), migrations run in
//! order, once, recorded in `odm_migrations`, resumed after a failure or a dead process, and
//! applied exactly once by runners starting together.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{sent, stored, stored_one};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::validator::Validated;

// ANCHOR: versioned
/// Version 1 stored `name: "Ada Lovelace"`; version 2 split it; version 3 added `born`.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "people", schema_version = 3, upgrade = "upgrade_person")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    first: String,
    last: String,
    born: Option<i32>,
}

/// Brings a stored person from version `from` to `from + 1`.
fn upgrade_person(from: u32, doc: &mut Document) -> Result<(), String> {
    match from {
        1 => {
            let name = doc.get_str("name").map_err(|_| "no `name`")?.to_owned();
            let (first, last) = name.split_once(' ').ok_or("`name` has no space")?;
            doc.insert("first", first);
            doc.insert("last", last);
            doc.remove("name");
        }
        2 => {
            doc.insert("born", Bson::Null);
        }
        _ => {}
    }
    Ok(())
}
// ANCHOR_END: versioned

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "notes")]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
}

fn ada() -> Person {
    Person {
        id: 1,
        first: "Ada".into(),
        last: "Lovelace".into(),
        born: Some(1815),
    }
}

#[tokio::test]
async fn inserts_and_replacements_store_the_version() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&ada()).await?;
    let stored = stored_one(&db, "people", 1).await.unwrap();
    assert_eq!(stored.get_i32("_v").unwrap(), 3);
    db.raw()
        .collection::<Document>("people")
        .update_one(doc! {"_id": 1}, doc! {"$set": {"_v": 2}})
        .await
        .unwrap();
    db.odm().replace_one(&ada()).await?;
    assert_eq!(
        stored_one(&db, "people", 1)
            .await
            .unwrap()
            .get_i32("_v")
            .unwrap(),
        3
    );
    // A model without a version stores none.
    db.odm()
        .insert_one(&Note {
            id: 1,
            text: "x".into(),
        })
        .await?;
    assert!(!stored_one(&db, "notes", 1)
        .await
        .unwrap()
        .contains_key("_v"));
    // The validator knows `_v`, without requiring it (older documents have none).
    let schema = Person::json_schema();
    assert!(schema
        .get_document("properties")
        .unwrap()
        .contains_key("_v"));
    assert!(!schema
        .get_array("required")
        .unwrap()
        .contains(&Bson::from("_v")));
    Ok(())
}

#[tokio::test]
async fn old_documents_are_upgraded_on_read_and_not_written_back() -> odm::Result<()> {
    let db = common::db().await?;
    let people = db.raw().collection::<Document>("people");
    people
        .insert_many([
            doc! {"_id": 1, "name": "Ada Lovelace"},
            doc! {"_id": 2, "first": "Alan", "last": "Turing", "_v": 2},
            doc! {"_id": 3, "first": "Grace", "last": "Hopper", "born": 1906, "_v": 3},
        ])
        .await
        .unwrap();
    db.commands().clear();
    let all: Vec<Person> = db
        .odm()
        .find(Filter::all())
        .sort(Person::id_field().asc())
        .await?;
    assert_eq!(sent(&db), ["find"]);
    let names: Vec<(&str, &str, Option<i32>)> = all
        .iter()
        .map(|p| (p.first.as_str(), p.last.as_str(), p.born))
        .collect();
    assert_eq!(
        names,
        [
            ("Ada", "Lovelace", None),
            ("Alan", "Turing", None),
            ("Grace", "Hopper", Some(1906))
        ]
    );
    // Reading writes nothing: the stored documents keep their old shape.
    let raw = stored(&db, "people").await;
    assert_eq!(raw[0], doc! {"_id": 1, "name": "Ada Lovelace"});
    assert_eq!(raw[1].get_i32("_v").unwrap(), 2);
    Ok(())
}

/// The message of the `Error::Decode` that reading person `id` is, after checking that it names
/// the collection, the document and `_v`.
async fn refused_at_v(db: &TestDb, id: i32) -> String {
    let err = db
        .odm()
        .find_one(Person::id_field().eq(id))
        .await
        .expect_err("refused");
    let odm::Error::Decode {
        collection,
        id: shown,
        path,
        message,
    } = &err
    else {
        panic!("not a decode error: {err:?}");
    };
    assert_eq!(
        (collection.as_str(), shown.as_str(), path.as_str()),
        ("people", format!("{{ _id: {id} }}").as_str(), "_v")
    );
    message.clone()
}

#[tokio::test]
async fn a_document_that_cannot_be_upgraded_is_a_decode_error_naming_it() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .collection::<Document>("people")
        .insert_one(doc! {"_id": 7, "name": "Plato"})
        .await
        .unwrap();
    let message = refused_at_v(&db, 7).await;
    assert!(
        message.contains("from schema version 1 to 2: `name` has no space"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn upserts_store_the_current_version() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let fields = || {
        Person::first()
            .set("Ada".to_owned())
            .and(Person::last().set("Lovelace".to_owned()))
            .and(Person::born().set(Some(1815)))
    };
    odm.update_one(Person::id_field().eq(1), fields())
        .upsert(true)
        .await?;
    let inserted: Option<Person> = odm
        .find_one_and_update(Person::id_field().eq(2), fields())
        .upsert(true)
        .return_new()
        .await?;
    assert_eq!(inserted.map(|p| p.id), Some(2));
    for id in [1, 2] {
        let raw = stored_one(&db, "people", id).await.expect("stored");
        assert_eq!(raw.get("_v"), Some(&Bson::Int32(3)), "{raw}");
        let read = odm.find_one(Person::id_field().eq(id)).await?;
        assert_eq!(read.map(|p| p.first), Some("Ada".to_owned()));
    }
    // An update of a stored document leaves its version as it is: `$setOnInsert` only.
    odm.update_one(Person::id_field().eq(1), Person::born().set(None))
        .upsert(true)
        .await?;
    let raw = stored_one(&db, "people", 1).await.expect("stored");
    assert_eq!(raw.get("_v"), Some(&Bson::Int32(3)));
    let update = common::first_statement(&db.commands().take(), "update", "people")
        .get_document("u")
        .expect("an update")
        .clone();
    assert_eq!(
        update.get_document("$setOnInsert").ok(),
        Some(&doc! {"_v": 3})
    );
    // An upsert that writes `_v` itself (a raw update can) is refused before anything is sent.
    let raw = odm::Update::<Person>::raw(doc! {"$set": {"_v": 1, "first": "Grace"}});
    let e = odm
        .update_one(Person::id_field().eq(3), raw)
        .upsert(true)
        .await
        .expect_err("writes _v");
    assert!(
        matches!(&e, odm::Error::Unsupported(m) if m.contains("`_v`")),
        "{e:?}"
    );
    assert!(sent(&db).is_empty());
    assert!(stored_one(&db, "people", 3).await.is_none());
    Ok(())
}

#[tokio::test]
async fn a_schema_version_that_is_not_a_whole_number_is_a_decode_error() -> odm::Result<()> {
    let db = common::db().await?;
    let coll = db.raw().collection::<Document>("people");
    let current = doc! {"first": "Ada", "last": "Lovelace", "born": 1815};
    for (id, v) in [
        (1, Bson::from("3")),
        (2, Bson::Null),
        (3, Bson::Double(2.5)),
        (4, Bson::Int32(0)),
        (5, Bson::Document(doc! {"$gt": 1})),
    ] {
        let mut d = current.clone();
        d.insert("_id", id);
        d.insert("_v", v.clone());
        coll.insert_one(d).await.unwrap();
        let message = refused_at_v(&db, id).await;
        assert!(message.contains("schema version is"), "{v}: {message}");
    }
    // A whole number stored as a double is that version.
    let mut d = current.clone();
    d.insert("_id", 6);
    d.insert("_v", 3.0);
    coll.insert_one(d).await.unwrap();
    assert!(db.odm().find_one(Person::id_field().eq(6)).await?.is_some());
    Ok(())
}

async fn records(db: &TestDb) -> Vec<Document> {
    stored(db, "odm_migrations").await
}

#[tokio::test]
async fn migrations_run_in_order_once_and_are_recorded() -> odm::Result<()> {
    let db = common::db().await?;
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    fn migrations(
        odm: &Odm,
        order: Arc<std::sync::Mutex<Vec<u32>>>,
    ) -> odm::migrations::Migrations<'_> {
        let (a, b) = (order.clone(), order);
        odm.migrations()
            .add(2, "second", move |_| {
                let b = b.clone();
                async move {
                    b.lock().unwrap().push(2);
                    Ok(())
                }
            })
            .add(1, "first", move |odm| {
                let a = a.clone();
                async move {
                    a.lock().unwrap().push(1);
                    odm.insert_one(&Note {
                        id: 1,
                        text: "seed".into(),
                    })
                    .await?;
                    Ok(())
                }
            })
    }
    let report = migrations(db.odm(), order.clone()).await?;
    assert_eq!(
        report.applied,
        [(1, "first".to_owned()), (2, "second".to_owned())]
    );
    assert_eq!(*order.lock().unwrap(), [1, 2]);
    let recorded = records(&db).await;
    assert_eq!(recorded.len(), 2);
    for (r, name) in recorded.iter().zip(["first", "second"]) {
        assert_eq!(r.get_str("name").unwrap(), name);
        assert!(r.get_datetime("started").is_ok() && r.get_datetime("finished").is_ok());
        assert_eq!(r.get_i32("attempts").unwrap(), 1);
    }
    db.commands().clear();
    let again = migrations(db.odm(), order.clone()).await?;
    assert!(again.applied.is_empty());
    assert_eq!(again.already.len(), 2);
    assert_eq!(*order.lock().unwrap(), [1, 2]);
    // Per finished migration: the claim refused as a duplicate, and one read of the record.
    assert_eq!(sent(&db), ["insert", "find", "insert", "find"]);
    Ok(())
}

#[tokio::test]
async fn a_failed_migration_stops_the_run_and_is_resumed_by_the_next() -> odm::Result<()> {
    let db = common::db().await?;
    let tries = Arc::new(AtomicUsize::new(0));
    let third = Arc::new(AtomicUsize::new(0));
    fn run(
        odm: &Odm,
        tries: Arc<AtomicUsize>,
        third: Arc<AtomicUsize>,
    ) -> odm::migrations::Migrations<'_> {
        odm.migrations()
            .add(1, "first", |_| async { Ok(()) })
            .add(2, "flaky", move |_| {
                let tries = tries.clone();
                async move {
                    if tries.fetch_add(1, Ordering::SeqCst) == 0 {
                        return Err(odm::Error::Migration {
                            version: 2,
                            name: "flaky".into(),
                            message: "disk full".into(),
                        });
                    }
                    Ok(())
                }
            })
            .add(3, "third", move |_| {
                let third = third.clone();
                async move {
                    third.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                }
            })
    }
    let err = run(db.odm(), tries.clone(), third.clone())
        .await
        .expect_err("the second fails");
    assert!(
        matches!(&err, odm::Error::Migration { version: 2, name, .. } if name == "flaky"),
        "{err:?}"
    );
    assert_eq!(third.load(Ordering::SeqCst), 0);
    let flaky = stored_one(&db, "odm_migrations", 2i64).await.unwrap();
    assert!(!flaky.contains_key("finished"));
    assert!(flaky.get_str("error").unwrap().contains("disk full"));
    let report = run(db.odm(), tries.clone(), third.clone()).await?;
    assert_eq!(
        report.applied,
        [(2, "flaky".to_owned()), (3, "third".to_owned())]
    );
    let flaky = stored_one(&db, "odm_migrations", 2i64).await.unwrap();
    assert_eq!(flaky.get_i32("attempts").unwrap(), 2);
    assert!(flaky.get_datetime("finished").is_ok() && !flaky.contains_key("error"));
    Ok(())
}

#[tokio::test]
async fn a_migration_left_by_a_dead_process_is_taken_over_when_its_lease_expires() -> odm::Result<()>
{
    let db = common::db().await?;
    db.raw()
        .collection::<Document>("odm_migrations")
        .insert_one(doc! {
            "_id": 1i64, "name": "first", "owner": odm::bson::oid::ObjectId::new(),
            "started": DateTime::now(), "lease_until": DateTime::from_millis(DateTime::now().timestamp_millis() + 300),
            "attempts": 1,
        })
        .await
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let report = db
        .odm()
        .migrations()
        .poll_interval(Duration::from_millis(20))
        .add(1, "first", move |_| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        })
        .await?;
    assert_eq!(report.applied.len(), 1);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let record = stored_one(&db, "odm_migrations", 1i64).await.unwrap();
    assert_eq!(record.get_i32("attempts").unwrap(), 2);
    assert!(record.get_datetime("finished").is_ok());
    Ok(())
}

#[tokio::test]
async fn a_recorded_version_under_another_name_is_refused() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .migrations()
        .add(1, "first", |_| async { Ok(()) })
        .await?;
    let err = db
        .odm()
        .migrations()
        .add(1, "renamed", |_| async { Ok(()) })
        .await
        .expect_err("refused");
    assert!(
        err.to_string()
            .contains("recorded in `odm_migrations` as `first`"),
        "{err}"
    );
    let twice = db
        .odm()
        .migrations()
        .add(4, "a", |_| async { Ok(()) })
        .add(4, "b", |_| async { Ok(()) })
        .await
        .expect_err("refused");
    assert!(twice.to_string().contains("added twice"), "{twice}");
    assert_eq!(records(&db).await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn runners_starting_together_apply_each_migration_exactly_once() -> odm::Result<()> {
    let db = common::db().await?;
    let applied: Arc<Vec<AtomicUsize>> = Arc::new((0..3).map(|_| AtomicUsize::new(0)).collect());
    let mut runners = Vec::new();
    for _ in 0..4 {
        let odm = db.odm().clone();
        let applied = applied.clone();
        runners.push(tokio::spawn(async move {
            let mut m = odm.migrations().poll_interval(Duration::from_millis(10));
            for v in 0..3u32 {
                let applied = applied.clone();
                m = m.add(v + 1, format!("step {v}"), move |odm| {
                    let applied = applied.clone();
                    async move {
                        applied[v as usize].fetch_add(1, Ordering::SeqCst);
                        // Long enough for the others to find it running and wait.
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        odm.database()
                            .collection::<Document>("counts")
                            .update_one(doc! {"_id": v}, doc! {"$inc": {"n": 1}})
                            .upsert(true)
                            .await?;
                        Ok(())
                    }
                });
            }
            m.await
        }));
    }
    let mut applied_total = 0;
    for r in runners {
        let report = r.await.expect("runner")?;
        applied_total += report.applied.len();
        assert_eq!(report.applied.len() + report.already.len(), 3);
    }
    assert_eq!(applied_total, 3);
    for a in applied.iter() {
        assert_eq!(a.load(Ordering::SeqCst), 1);
    }
    let counts = stored(&db, "counts").await;
    assert!(
        counts.iter().all(|c| c.get_i32("n").unwrap() == 1),
        "{counts:?}"
    );
    assert!(records(&db)
        .await
        .iter()
        .all(|r| r.get_i32("attempts").unwrap() == 1));
    Ok(())
}

#[tokio::test]
async fn a_migration_stores_every_old_document_at_the_current_version() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .collection::<Document>("people")
        .insert_many([
            doc! {"_id": 1, "name": "Ada Lovelace"},
            doc! {"_id": 2, "first": "Alan", "last": "Turing", "_v": 2},
        ])
        .await
        .unwrap();
    let odm = db.odm();
    // ANCHOR: migration
    let report = odm
        .migrations()
        .add(1, "store every person at version 3", |odm| async move {
            // Idempotent: run again, it finds nothing older.
            let old = Filter::raw(doc! {"$or": [{"_v": {"$exists": false}}, {"_v": {"$lt": 3}}]});
            let people: Vec<Person> = odm.find(old).await?; // upgraded as they are read
            for person in &people {
                odm.replace_one(person).await?; // stored in the current shape, with `_v: 3`
            }
            Ok(())
        })
        .await?;
    // ANCHOR_END: migration
    assert_eq!(report.applied.len(), 1);
    let raw = stored(&db, "people").await;
    assert_eq!(
        raw[0],
        doc! {"_id": 1, "first": "Ada", "last": "Lovelace", "born": null, "_v": 3}
    );
    assert_eq!(
        raw[1],
        doc! {"_id": 2, "first": "Alan", "last": "Turing", "born": null, "_v": 3}
    );
    Ok(())
}

#[tokio::test]
async fn runners_finding_an_expired_lease_together_take_it_over_once() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .collection::<Document>("odm_migrations")
        .insert_one(doc! {
            "_id": 1i64, "name": "first", "owner": odm::bson::oid::ObjectId::new(),
            "started": DateTime::now(), "lease_until": DateTime::from_millis(0), "attempts": 1,
        })
        .await
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let mut runners = Vec::new();
    for _ in 0..4 {
        let (odm, ran) = (db.odm().clone(), ran.clone());
        runners.push(tokio::spawn(async move {
            odm.migrations()
                .poll_interval(Duration::from_millis(10))
                .add(1, "first", move |_| {
                    let ran = ran.clone();
                    async move {
                        ran.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        Ok(())
                    }
                })
                .await
        }));
    }
    for r in runners {
        r.await.expect("runner")?;
    }
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let record = stored_one(&db, "odm_migrations", 1i64).await.unwrap();
    assert_eq!(record.get_i32("attempts").unwrap(), 2);
    Ok(())
}

// ANCHOR: kinds
/// Tools and toys share one collection, versioned by their enum of kinds: version 1 stored
/// the name as `label`. Every kind is written with the enum's `_v` and upgraded on read.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(
    collection = "gear",
    common = "name",
    schema_version = 2,
    upgrade = "upgrade_gear"
)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Gear {
    Tool(Tool),
    Toy(Toy),
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Gear")]
struct Tool {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Gear")]
struct Toy {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

/// Brings any kind of gear from version `from` to `from + 1`.
fn upgrade_gear(from: u32, doc: &mut Document) -> Result<(), String> {
    if from == 1 {
        let label = doc.remove("label").ok_or("no `label`")?;
        doc.insert("name", label);
    }
    Ok(())
}
// ANCHOR_END: kinds

#[tokio::test]
async fn kinds_are_versioned_by_their_enum() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Tool {
        id: 1,
        name: "hammer".into(),
    })
    .await?;
    odm.insert_one(&Gear::Toy(Toy {
        id: 2,
        name: "kite".into(),
    }))
    .await?;
    for id in [1, 2] {
        assert_eq!(
            stored_one(&db, "gear", id)
                .await
                .unwrap()
                .get_i32("_v")
                .ok(),
            Some(2),
            "{id}"
        );
    }
    db.raw()
        .collection::<Document>("gear")
        .insert_many([
            doc! {"_id": 3, "type": "tool", "label": "saw"},
            doc! {"_id": 4, "type": "toy", "label": "ball", "_v": 1},
        ])
        .await
        .unwrap();
    // Through a kind, and through the enum: upgraded as they are read, not written back.
    let tools: Vec<Tool> = odm.find(Filter::all()).sort(Tool::id().asc()).await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["hammer", "saw"]);
    let all: Vec<Gear> = odm.find(Filter::all()).sort(Gear::id_field().asc()).await?;
    assert_eq!(
        all[3],
        Gear::Toy(Toy {
            id: 4,
            name: "ball".into()
        })
    );
    assert_eq!(
        stored_one(&db, "gear", 3).await.unwrap(),
        doc! {"_id": 3, "type": "tool", "label": "saw"}
    );
    // A replacement stores the current shape and version.
    odm.replace_one(&tools[1]).await?;
    assert_eq!(
        stored_one(&db, "gear", 3).await.unwrap(),
        doc! {"_id": 3, "name": "saw", "type": "tool", "_v": 2}
    );
    // A document newer than the enum's version (written by a newer release) is read as it is.
    db.raw()
        .collection::<Document>("gear")
        .insert_one(doc! {"_id": 5, "type": "tool", "name": "drill", "_v": 9})
        .await
        .unwrap();
    let drill = odm.find_one::<Tool>(Tool::id().eq(5)).await?;
    assert_eq!(drill.map(|t| t.name), Some("drill".to_owned()));
    Ok(())
}

/// Notes: migration 1 inserts two, migration 2 marks them; 2 declares a down step, 1 none.
fn reversible(odm: &Odm) -> odm::migrations::Migrations<'_> {
    odm.migrations()
        .add(1, "seed notes", |odm: Odm| async move {
            let notes = odm.database().collection::<Document>("notes");
            Ok(notes
                .insert_many([doc! {"_id": 1, "text": "a"}, doc! {"_id": 2, "text": "b"}])
                .await?)
        })
        .add(2, "mark notes", |odm: Odm| async move {
            let notes = odm.database().collection::<Document>("notes");
            Ok(notes
                .update_many(doc! {}, doc! {"$set": {"marked": true}})
                .await?)
        })
        .down(|odm: Odm| async move {
            let notes = odm.database().collection::<Document>("notes");
            Ok(notes
                .update_many(doc! {}, doc! {"$unset": {"marked": ""}})
                .await?)
        })
}

#[tokio::test]
async fn a_plan_says_what_a_run_would_start_and_sends_one_find() -> odm::Result<()> {
    let db = common::db().await?;
    db.commands().clear();
    let plan = reversible(db.odm()).plan().await?;
    assert_eq!(sent(&db), ["find"]);
    assert_eq!(
        plan.to_run,
        [(1, "seed notes".to_owned()), (2, "mark notes".to_owned())]
    );
    assert!(plan.finished.is_empty() && plan.to_revert.is_none());
    assert!(records(&db).await.is_empty());
    assert!(stored(&db, "notes").await.is_empty());

    let report = reversible(db.odm()).await?;
    // Each run with its time and what it changed, which its record keeps.
    let changed: Vec<(u32, Option<u64>)> = report
        .runs
        .iter()
        .map(|r| (r.version, r.documents))
        .collect();
    assert_eq!(changed, [(1, Some(2)), (2, Some(2))]);
    let recorded: Vec<i64> = records(&db)
        .await
        .iter()
        .map(|r| r.get_i64("documents").unwrap())
        .collect();
    assert_eq!(recorded, [2, 2]);
    let plan = reversible(db.odm()).plan().await?;
    assert!(plan.to_run.is_empty());
    assert_eq!(plan.to_revert, Some((2, "mark notes".to_owned())));
    assert_eq!(plan.revert_refused, None);
    Ok(())
}

#[tokio::test]
async fn revert_runs_the_last_migrations_down_step_and_forgets_it() -> odm::Result<()> {
    let db = common::db().await?;
    reversible(db.odm()).await?;
    db.commands().clear();
    let reverted = reversible(db.odm()).revert().await?.expect("one reverted");
    assert_eq!((reverted.version, reverted.documents), (2, Some(2)));
    // The records read, the revert claimed, the down step's update, the record deleted.
    assert_eq!(sent(&db), ["find", "update", "update", "delete"]);
    for note in stored(&db, "notes").await {
        assert!(!note.contains_key("marked"), "{note}");
    }
    let versions: Vec<i64> = records(&db)
        .await
        .iter()
        .map(|r| r.get_i64("_id").unwrap())
        .collect();
    assert_eq!(versions, [1]);

    // Migration 1 has no down step: refused before anything is written.
    db.commands().clear();
    let err = reversible(db.odm()).revert().await.expect_err("refused");
    assert!(
        matches!(&err, odm::Error::Migration { version: 1, message, .. }
            if message.contains("declares no down step")),
        "{err}"
    );
    assert_eq!(sent(&db), ["find"]);
    assert_eq!(stored(&db, "notes").await.len(), 2);
    let plan = reversible(db.odm()).plan().await?;
    assert_eq!(plan.to_run, [(2, "mark notes".to_owned())]);
    assert!(plan
        .revert_refused
        .is_some_and(|r| r.contains("no down step")));

    // A run applies migration 2 again.
    let report = reversible(db.odm()).await?;
    assert_eq!(report.applied, [(2, "mark notes".to_owned())]);
    assert!(stored(&db, "notes")
        .await
        .iter()
        .all(|n| n.get_bool("marked").is_ok_and(|m| m)));
    Ok(())
}

#[tokio::test]
async fn a_failed_step_is_recorded_as_the_server_said_it() -> odm::Result<()> {
    let db = common::db().await?;
    let err = db
        .odm()
        .migrations()
        .add(1, "twice", |odm: Odm| async move {
            let notes = odm.database().collection::<Document>("notes");
            notes.insert_one(doc! {"_id": 1}).await?;
            notes.insert_one(doc! {"_id": 1}).await?;
            Ok(())
        })
        .await
        .expect_err("a duplicate key");
    let record = stored_one(&db, "odm_migrations", 1i64).await.unwrap();
    let recorded = record.get_str("error").unwrap();
    assert!(recorded.contains("E11000"), "{recorded}");
    assert!(
        !recorded.contains("Kind:") && !recorded.contains("labels"),
        "{recorded}"
    );
    assert!(err.to_string().ends_with(recorded), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_down_before_any_migration_is_refused() -> odm::Result<()> {
    let db = common::db().await?;
    let err = db
        .odm()
        .migrations()
        .down(|_| async { Ok(()) })
        .await
        .expect_err("refused");
    assert!(matches!(err, odm::Error::Unsupported(_)), "{err}");
    assert!(records(&db).await.is_empty());
    Ok(())
}
