//! Optimistic concurrency and timestamps (`#[odm(version)]`, `#[odm(created_at)]`,
//! `#[odm(updated_at)]`): every write of the ODM keeps them, a write of a loaded document
//! requires the version it was loaded at, and concurrent writers lose no update. What landed
//! is read back with the raw driver; commands are counted.

mod common;

use std::sync::Arc;

use common::{last_command, sent, stored_one};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::Error;

// ANCHOR: model
/// A library's book: its loans change `available`; two librarians editing it at once must not
/// overwrite each other.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    available: i32,
    #[odm(version)]
    version: u64,
    #[odm(created_at)]
    created_at: DateTime,
    #[odm(updated_at)]
    updated_at: DateTime,
}
// ANCHOR_END: model

/// The same without kept fields: its writes send what they always sent.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "plain")]
struct Plain {
    #[serde(rename = "_id")]
    id: i32,
    n: i32,
}

/// Only an `updated_at`, optional, under another stored name.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "notes")]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
    #[odm(updated_at)]
    #[serde(rename = "modified")]
    touched: Option<DateTime>,
}

fn book(id: i32) -> Book {
    Book {
        id,
        title: "Dune".into(),
        available: 3,
        version: 7,
        created_at: DateTime::from_millis(0),
        updated_at: DateTime::from_millis(0),
    }
}

fn version(d: &Document) -> i64 {
    d.get_i64("version").expect("an Int64 version")
}

fn at(d: &Document, key: &str) -> DateTime {
    *d.get_datetime(key).expect("a date")
}

#[tokio::test]
async fn an_insert_stores_version_zero_and_both_timestamps() -> odm::Result<()> {
    let db = common::db().await?;
    let before = DateTime::now();
    db.odm().insert_one(&book(1)).await?;
    db.odm().insert_many(&[book(2), book(3)]).await?;
    assert_eq!(sent(&db), ["insert", "insert"]);
    for id in 1..=3 {
        let d = stored_one(&db, "books", id).await.expect("stored");
        assert_eq!(version(&d), 0, "whatever the struct held");
        assert!(at(&d, "created_at") >= before);
        assert_eq!(at(&d, "created_at"), at(&d, "updated_at"));
        // The fields keep their places.
        let keys: Vec<&str> = d.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "_id",
                "title",
                "available",
                "version",
                "created_at",
                "updated_at"
            ]
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_replacement_of_the_loaded_version_increments_it() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&book(1)).await?;
    let created = at(&stored_one(&db, "books", 1).await.unwrap(), "created_at");
    // ANCHOR: save
    let mut loaded = odm.get::<Book>(1).await?.expect("stored");
    loaded.available -= 1;
    odm.replace_one(&loaded).await?;
    // ANCHOR_END: save
    sent(&db);
    let d = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(version(&d), 1);
    assert_eq!(d.get_i32("available").unwrap(), 2);
    assert_eq!(at(&d, "created_at"), created);
    assert!(at(&d, "updated_at") >= created);

    // The filter names the loaded version: one `update`.
    loaded.version = 1;
    odm.replace_one(&loaded).await?;
    let update = last_command(&db, "update");
    let q = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("q")
        .unwrap()
        .clone();
    assert_eq!(
        q,
        doc! { "_id": 1, "version": 1_i64, "created_at": loaded.created_at }
    );
    assert_eq!(version(&stored_one(&db, "books", 1).await.unwrap()), 2);
    Ok(())
}

/// Only a `created_at`: kept by replacements without a version to check.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "joiners")]
struct Joiner {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[odm(created_at)]
    joined: Option<DateTime>,
}

#[tokio::test]
async fn a_replacement_keeps_the_stored_created_at_whatever_the_struct_holds() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&book(1)).await?;
    let created = at(&stored_one(&db, "books", 1).await.unwrap(), "created_at");
    let mut loaded = odm.get::<Book>(1).await?.expect("stored");
    sent(&db);
    loaded.created_at = DateTime::from_millis(86_400_000);
    loaded.available = 1;
    let replaced = odm.replace_one(&loaded).await?;
    assert_eq!(replaced.matched_count, 1);
    // The first replacement names the struct's value and misses; the stored one is read and
    // the replacement sent again with it.
    assert_eq!(sent(&db), ["update", "find", "update"]);
    let d = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(at(&d, "created_at"), created, "the insert time stands");
    assert_eq!(d.get_i32("available").unwrap(), 1, "the rest is replaced");
    assert_eq!(version(&d), 1, "one write");

    // The same through an upsert, and with a stale version still a conflict.
    loaded.version = 1;
    odm.replace_one(&loaded).upsert(true).await?;
    let d = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(at(&d, "created_at"), created);
    assert_eq!(version(&d), 2);
    let err = odm
        .replace_one(&loaded)
        .await
        .expect_err("version 1 is stale");
    assert!(
        matches!(err, Error::VersionConflict { found: 2, .. }),
        "{err}"
    );
    assert_eq!(
        at(&stored_one(&db, "books", 1).await.unwrap(), "created_at"),
        created
    );

    // Without a version: a struct holding none, or another date, keeps the stored one.
    odm.insert_one(&Joiner {
        id: 1,
        name: "Ann".into(),
        joined: None,
    })
    .await?;
    let joined = at(&stored_one(&db, "joiners", 1).await.unwrap(), "joined");
    for given in [None, Some(DateTime::from_millis(1))] {
        let member = Joiner {
            id: 1,
            name: "Ann B.".into(),
            joined: given,
        };
        odm.replace_one(&member).await?;
        let d = stored_one(&db, "joiners", 1).await.unwrap();
        assert_eq!(at(&d, "joined"), joined, "{given:?}");
        assert_eq!(d.get_str("name").unwrap(), "Ann B.");
    }
    // An upsert that inserts takes now.
    let before = DateTime::now();
    odm.replace_one(&Joiner {
        id: 2,
        name: "Bo".into(),
        joined: None,
    })
    .upsert(true)
    .await?;
    assert!(at(&stored_one(&db, "joiners", 2).await.unwrap(), "joined") >= before);
    Ok(())
}

#[tokio::test]
async fn a_stale_replacement_is_a_conflict_and_writes_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&book(1)).await?;
    let mut mine = odm.get::<Book>(1).await?.unwrap();
    let mut theirs = mine.clone();
    theirs.title = "Dune Messiah".into();
    odm.replace_one(&theirs).await?;
    let after_theirs = stored_one(&db, "books", 1).await.unwrap();
    sent(&db);
    mine.available = 0;
    let e = odm.replace_one(&mine).await.expect_err("stale");
    match &e {
        Error::VersionConflict {
            collection,
            id,
            expected,
            found,
        } => {
            assert_eq!(collection, "books");
            assert_eq!(id, "{ _id: 1 }");
            assert_eq!((*expected, *found), (0, 1));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sent(&db), ["update", "find"]);
    assert_eq!(stored_one(&db, "books", 1).await.unwrap(), after_theirs);

    // Upserting does not turn a conflict into a second document or a duplicate key.
    let e = odm
        .replace_one(&mine)
        .upsert(true)
        .await
        .expect_err("stale");
    assert!(
        matches!(e, Error::VersionConflict { found: 1, .. }),
        "{e:?}"
    );
    assert_eq!(stored_one(&db, "books", 1).await.unwrap(), after_theirs);

    // A document deleted since it was loaded: nothing matched, as without a version.
    odm.delete_one(Book::id_field().eq(1)).await?;
    let r = odm.replace_one(&mine).await?;
    assert_eq!(r.matched_count, 0);
    Ok(())
}

#[tokio::test]
async fn every_update_increments_the_version_and_sets_updated_at() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&book(1)).await?;
    let inserted = stored_one(&db, "books", 1).await.unwrap();
    sent(&db);
    odm.update_by_id::<Book>(1, Book::available().inc(-1))
        .await?;
    let update = last_command(&db, "update");
    let u = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("u")
        .unwrap()
        .clone();
    assert_eq!(
        u.get_document("$inc").unwrap(),
        &doc! { "available": -1, "version": 1_i64 }
    );
    assert!(u
        .get_document("$set")
        .unwrap()
        .get_datetime("updated_at")
        .is_ok());
    odm.update_many(
        Book::title().eq("Dune".to_owned()),
        Book::available().inc(1),
    )
    .await?;
    odm.find_one_and_update(Book::id_field().eq(1), Book::available().inc(1))
        .await?;
    let d = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(version(&d), 3);
    assert_eq!(d.get_i32("available").unwrap(), 4);
    assert!(at(&d, "updated_at") >= at(&inserted, "updated_at"));
    assert_eq!(at(&d, "created_at"), at(&inserted, "created_at"));

    // An upsert that inserts: created by its update (version 1), both timestamps set.
    odm.update_by_id::<Book>(2, Book::title().set("Emma".to_owned()))
        .upsert(true)
        .await?;
    let d = stored_one(&db, "books", 2).await.unwrap();
    assert_eq!(version(&d), 1);
    assert!(d.get_datetime("created_at").is_ok());
    assert!(d.get_datetime("updated_at").is_ok());
    Ok(())
}

#[tokio::test]
async fn update_document_requires_the_loaded_version() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&book(1)).await?;
    let loaded = odm.get::<Book>(1).await?.unwrap();
    sent(&db);
    // ANCHOR: update_document
    odm.update_document(&loaded, Book::available().inc(-1))
        .await?;
    // ANCHOR_END: update_document
    assert_eq!(sent(&db), ["update"]);
    // Stale: a conflict, and nothing written. Upserting, the stale version's filter matches
    // nothing and the insert meets the stored `_id`: still the version's conflict, not a
    // duplicate key.
    for upsert in [false, true] {
        let e = odm
            .update_document(&loaded, Book::available().inc(-1))
            .upsert(upsert)
            .await
            .expect_err("stale");
        assert!(
            matches!(
                e,
                Error::VersionConflict {
                    expected: 0,
                    found: 1,
                    ..
                }
            ),
            "upsert {upsert}: {e:?}"
        );
        assert_eq!(sent(&db), ["update", "find"]);
        let d = stored_one(&db, "books", 1).await.unwrap();
        assert_eq!((d.get_i32("available").unwrap(), version(&d)), (2, 1));
    }
    Ok(())
}

#[tokio::test]
async fn a_raw_update_of_a_kept_field_is_refused() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&book(1)).await?;
    sent(&db);
    for raw in [
        doc! { "$set": { "version": 0 } },
        doc! { "$currentDate": { "updated_at": true } },
        doc! { "$unset": { "created_at": "" } },
    ] {
        let e = odm
            .update_by_id::<Book>(1, Update::raw(raw))
            .await
            .expect_err("refused");
        assert!(
            matches!(&e, Error::Unsupported(m) if m.contains("kept by odm")),
            "{e:?}"
        );
    }
    assert!(sent(&db).is_empty());
    Ok(())
}

#[tokio::test]
async fn a_model_without_kept_fields_sends_what_it_always_sent() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Plain { id: 1, n: 0 }).await?;
    odm.update_by_id::<Plain>(1, Plain::n().inc(1)).await?;
    let update = last_command(&db, "update");
    let u = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("u")
        .unwrap()
        .clone();
    assert_eq!(u, doc! { "$inc": { "n": 1 } });
    odm.replace_one(&Plain { id: 1, n: 5 }).await?;
    assert_eq!(
        stored_one(&db, "plain", 1).await.unwrap(),
        doc! { "_id": 1, "n": 5 }
    );
    Ok(())
}

#[tokio::test]
async fn an_optional_renamed_updated_at_is_kept() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Note {
        id: 1,
        text: "a".into(),
        touched: None,
    })
    .await?;
    let d = stored_one(&db, "notes", 1).await.unwrap();
    let first = at(&d, "modified");
    odm.update_by_id::<Note>(1, Note::text().set("b".to_owned()))
        .await?;
    let d = stored_one(&db, "notes", 1).await.unwrap();
    assert!(at(&d, "modified") >= first);
    assert!(d.get("version").is_none() && d.get("created_at").is_none());
    let note = odm.get::<Note>(1).await?.unwrap();
    assert!(note.touched.is_some());
    // Queried like any field.
    let found = odm.find(Note::touched().gte(first)).await?;
    assert_eq!(found.len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_stored_version_that_is_not_a_number_is_a_typed_error() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .collection::<Document>("books")
        .insert_one(doc! {
            "_id": 1, "title": "x", "available": 1, "version": "seven",
            "created_at": DateTime::from_millis(0), "updated_at": DateTime::from_millis(0),
        })
        .await?;
    let e = db
        .odm()
        .replace_one(&Book {
            version: 0,
            ..book(1)
        })
        .await
        .expect_err("not a number");
    match &e {
        Error::Decode {
            collection,
            id,
            path,
            ..
        } => {
            assert_eq!((collection.as_str(), id.as_str()), ("books", "{ _id: 1 }"));
            assert_eq!(path, "version");
        }
        other => panic!("{other:?}"),
    }
    let d = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(d.get("version"), Some(&Bson::String("seven".into())));
    Ok(())
}

/// N writers load the same document, change it and save it, round after round: each round,
/// exactly one save wins and the others are told; no update is lost.
#[tokio::test]
async fn concurrent_writers_lose_no_update() -> odm::Result<()> {
    const WRITERS: usize = 6;
    const ROUNDS: usize = 5;
    let db = common::db().await?;
    db.odm().insert_one(&book(1)).await?;
    let loaded = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let saved = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let odm = db.odm().clone();
        let (loaded, saved) = (loaded.clone(), saved.clone());
        tasks.push(tokio::spawn(async move {
            let mut wins = Vec::new();
            for round in 0..ROUNDS {
                let mut mine = odm.get::<Book>(1).await?.expect("stored");
                loaded.wait().await;
                mine.available += 1;
                mine.title = format!("round {round} by {writer}");
                match odm.replace_one(&mine).await {
                    Ok(r) => {
                        assert_eq!(r.modified_count, 1);
                        wins.push(round);
                    }
                    Err(Error::VersionConflict { .. }) => {}
                    Err(e) => return Err(e),
                }
                saved.wait().await;
            }
            Ok::<_, Error>(wins)
        }));
    }
    let mut per_round = [0; ROUNDS];
    for t in tasks {
        for round in t.await.expect("task")? {
            per_round[round] += 1;
        }
    }
    assert_eq!(per_round, [1; ROUNDS], "one save wins per round");
    let d = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(version(&d), ROUNDS as i64);
    assert_eq!(
        d.get_i32("available").unwrap(),
        3 + ROUNDS as i32,
        "no update lost"
    );
    Ok(())
}

/// Inside a transaction, a conflict is the caller's to handle: it is not transient, so the
/// transaction aborts with it and nothing of the body lands.
#[tokio::test]
async fn a_conflict_inside_a_transaction_aborts_it() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&[book(1), book(2)]).await?;
    let stale = odm.get::<Book>(2).await?.unwrap();
    odm.update_by_id::<Book>(2, Book::available().inc(-1))
        .await?;
    let outcome = odm
        .transaction(async |tx| {
            let mut first = odm.get::<Book>(1).session(tx.session()).await?.unwrap();
            first.available -= 1;
            odm.replace_one(&first).session(tx.session()).await?;
            odm.replace_one(&stale).session(tx.session()).await?;
            Ok(())
        })
        .await;
    assert!(
        matches!(outcome, Err(Error::VersionConflict { .. })),
        "{outcome:?}"
    );
    let d = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!((d.get_i32("available").unwrap(), version(&d)), (3, 0));
    Ok(())
}

/// Two kinds in one collection: a phone keeps a version and both timestamps, a cable none.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "gadgets", common = "name")]
#[serde(tag = "type", rename_all = "snake_case")]
enum Gadget {
    Phone(Phone),
    Cable(Cable),
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Gadget")]
struct Phone {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[odm(version)]
    version: u64,
    #[odm(created_at)]
    created_at: DateTime,
    #[odm(updated_at)]
    updated_at: DateTime,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Gadget")]
struct Cable {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

/// Written through their enum, kinds keep their own fields: an insert stamps a phone and
/// leaves a cable alone, a replacement of a loaded phone requires its version. An update
/// through the enum, which may match both kinds, is refused before anything is sent; through
/// the kind it is stamped.
#[tokio::test]
async fn kinds_written_through_their_enum_keep_their_own_fields() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let phone = Phone {
        id: 1,
        name: "fairphone".into(),
        version: 7,
        created_at: DateTime::from_millis(0),
        updated_at: DateTime::from_millis(0),
    };
    odm.insert_many(&[
        Gadget::Phone(phone.clone()),
        Gadget::Cable(Cable {
            id: 2,
            name: "usb-c".into(),
        }),
    ])
    .await?;
    let stored = stored_one(&db, "gadgets", 1).await.unwrap();
    assert_eq!(version(&stored), 0);
    assert!(at(&stored, "created_at") > DateTime::from_millis(0));
    assert_eq!(
        stored_one(&db, "gadgets", 2).await.unwrap(),
        doc! { "_id": 2, "type": "cable", "name": "usb-c" }
    );

    let loaded = odm.get::<Gadget>(1).await?.unwrap();
    let mut theirs = loaded.clone();
    if let Gadget::Phone(p) = &mut theirs {
        p.name = "fairphone 5".into();
    }
    odm.replace_one(&theirs).await?;
    assert_eq!(version(&stored_one(&db, "gadgets", 1).await.unwrap()), 1);
    let e = odm.replace_one(&loaded).await.expect_err("stale");
    assert!(
        matches!(&e, Error::VersionConflict { collection, expected: 0, found: 1, .. } if collection == "gadgets"),
        "{e:?}"
    );

    sent(&db);
    let e = odm
        .update_many(Filter::<Gadget>::all(), Gadget::name().set("renamed"))
        .await
        .expect_err("mixed kinds");
    assert!(
        matches!(&e, Error::Unsupported(m) if m.contains("gadgets") && m.contains("each kind")),
        "{e:?}"
    );
    assert!(sent(&db).is_empty());
    odm.update_by_id::<Phone>(1, Phone::name().set("renamed"))
        .await?;
    let stored = stored_one(&db, "gadgets", 1).await.unwrap();
    assert_eq!(
        (stored.get_str("name").ok(), version(&stored)),
        (Some("renamed"), 2)
    );
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "labels")]
struct Label {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
}

/// A jar keeps one label (cleared when the label is deleted) and others (pulled).
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "jars")]
struct Jar {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "nullify")]
    label: Option<Ref<Label>>,
    #[reference(many, max = 10, on_delete = "pull")]
    spares: Vec<Ref<Label>>,
    #[odm(version)]
    version: u64,
    #[odm(updated_at)]
    updated_at: DateTime,
}

#[tokio::test]
async fn a_delete_rule_s_write_is_a_new_version_of_the_holder() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let labels: Vec<Label> = (1..=3)
        .map(|id| Label {
            id,
            text: format!("label {id}"),
        })
        .collect();
    odm.insert_many(&labels).await?;
    let jar = Jar {
        id: 1,
        label: Some(Ref::new(1)),
        spares: vec![Ref::new(2), Ref::new(3)],
        version: 0,
        updated_at: DateTime::from_millis(0),
    };
    odm.insert_one(&jar).await?;
    let loaded = odm.get::<Jar>(1).await?.expect("stored");
    let before = at(&stored_one(&db, "jars", 1).await.unwrap(), "updated_at");
    // Deleting a label nullifies the jar's `label`; deleting another pulls it from `spares`.
    odm.delete_one(Label::id_field().eq(1)).await?;
    odm.delete_one(Label::id_field().eq(2)).await?;
    // The rule's update names both kept fields with the reference it clears.
    let update = common::first_statement(&db.commands().take(), "update", "jars")
        .get_document("u")
        .expect("an update")
        .clone();
    assert_eq!(
        update.get_document("$inc").ok(),
        Some(&doc! {"version": 1_i64}),
        "{update}"
    );
    assert!(
        update
            .get_document("$set")
            .is_ok_and(|s| s.contains_key("updated_at")),
        "{update}"
    );
    let d = stored_one(&db, "jars", 1).await.unwrap();
    assert_eq!(d.get("label"), Some(&Bson::Null));
    assert_eq!(d.get_array("spares").unwrap(), &vec![Bson::Int32(3)]);
    assert_eq!(version(&d), 2, "one version per rule's write: {d}");
    assert!(at(&d, "updated_at") >= before);
    // The jar loaded before the deletes is stale: replacing it would bring back references to
    // deleted labels. It is a conflict, and nothing is written.
    let e = odm.replace_one(&loaded).await.expect_err("stale");
    assert!(
        matches!(
            e,
            Error::VersionConflict {
                expected: 0,
                found: 2,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(stored_one(&db, "jars", 1).await.unwrap(), d);
    Ok(())
}

/// A crew lists its members; a member keeps its crew, a version and `updated_at`.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "crews")]
struct Crew {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 10, inverse = "crew", on_delete = "pull")]
    members: Vec<Ref<Member>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "members")]
struct Member {
    #[serde(rename = "_id")]
    id: i32,
    #[parent(inverse = "members")]
    crew: Ref<Crew>,
    #[odm(version)]
    version: u64,
    #[odm(updated_at)]
    updated_at: DateTime,
}

#[tokio::test]
async fn moving_a_child_to_another_parent_is_a_new_version_of_it() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    for (id, members) in [(1, vec![Ref::new(1)]), (2, vec![])] {
        odm.insert_one(&Crew { id, members }).await?;
    }
    odm.insert_one(&Member {
        id: 1,
        crew: Ref::new(1),
        version: 0,
        updated_at: DateTime::from_millis(0),
    })
    .await?;
    let loaded = odm.get::<Member>(1).await?.expect("stored");
    odm.reassign(Member::crew(), 1, 2).await?;
    let d = stored_one(&db, "members", 1).await.unwrap();
    assert_eq!((d.get_i32("crew").unwrap(), version(&d)), (2, 1), "{d}");
    assert!(at(&d, "updated_at") > DateTime::from_millis(0));
    // Saving the member loaded before the move would move it back on one side only.
    let e = odm.replace_one(&loaded).await.expect_err("stale");
    assert!(
        matches!(
            e,
            Error::VersionConflict {
                expected: 0,
                found: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(stored_one(&db, "members", 1).await.unwrap(), d);
    Ok(())
}
