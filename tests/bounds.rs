//! Rule of thumb 3 at run time: pushes through the ODM onto a bounded array fail atomically
//! when it is full, and documents over their bound are never written.

mod common;

use common::{sent, stored, stored_one};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Address {
    street: String,
    city: String,
}

/// Seed 001's one-to-few: a person with a handful of addresses.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "person")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[embed(max = 3)]
    addresses: Vec<Address>,
}

fn address(n: usize) -> Address {
    Address {
        street: format!("{n} Sesame St"),
        city: "Anytown".into(),
    }
}

fn kate(addresses: usize) -> Person {
    Person {
        id: 1,
        name: "Kate Monster".into(),
        addresses: (0..addresses).map(address).collect(),
    }
}

async fn stored_addresses(db: &TestDb) -> usize {
    stored_one(db, "person", 1)
        .await
        .unwrap()
        .get_array("addresses")
        .unwrap()
        .len()
}

#[tokio::test]
async fn a_push_onto_a_full_array_fails_and_writes_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    assert_eq!(Person::addresses().max_len(), Some(3));
    db.odm().insert_one(&kate(2)).await?;
    db.odm()
        .update_by_id::<Person>(1, Person::addresses().push(address(2)))
        .await?;
    assert_eq!(stored_addresses(&db).await, 3);
    db.commands().clear();

    let err = db
        .odm()
        .update_by_id::<Person>(1, Person::addresses().push(address(3)))
        .await
        .unwrap_err();
    match &err {
        odm::Error::BoundExceeded {
            collection,
            path,
            max,
            documents,
            ..
        } => {
            assert_eq!(
                (collection.as_str(), path.as_str(), *max, *documents),
                ("person", "addresses", 3, 1)
            );
        }
        other => panic!("expected BoundExceeded, got {other}"),
    }
    assert_eq!(stored_addresses(&db).await, 3);
    // The guard is in the update's own filter; the count only runs to explain a miss.
    let commands = db.commands().take();
    assert_eq!(
        commands.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["update", "aggregate"]
    );
    let q = commands[0]
        .command
        .as_ref()
        .unwrap()
        .get_array("updates")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("q")
        .unwrap()
        .clone();
    assert_eq!(
        q,
        doc! {"$and": [{"_id": 1}, {"addresses.2": {"$exists": false}}]}
    );

    // Missing is not full: no such document is not a bound error.
    let missing = db
        .odm()
        .update_by_id::<Person>(7, Person::addresses().push(address(0)))
        .await?;
    assert_eq!(missing.matched_count, 0);
    Ok(())
}

#[tokio::test]
async fn add_to_set_of_an_element_already_there_is_not_an_overflow() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&kate(3)).await?;
    let res = db
        .odm()
        .update_by_id::<Person>(1, Person::addresses().add_to_set(address(1)))
        .await?;
    assert_eq!((res.matched_count, res.modified_count), (1, 0));
    let err = db
        .odm()
        .update_by_id::<Person>(1, Person::addresses().add_to_set(address(9)))
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::BoundExceeded { .. }), "{err}");
    assert_eq!(stored_addresses(&db).await, 3);
    Ok(())
}

#[tokio::test]
async fn concurrent_pushes_never_pass_the_bound() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&kate(0)).await?;
    let odm = db.odm();
    let pushes = (0..12).map(|n| async move {
        odm.update_by_id::<Person>(1, Person::addresses().push(address(n)))
            .await
    });
    let results = futures_util::future::join_all(pushes).await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let full = results
        .iter()
        .filter(|r| matches!(r, Err(odm::Error::BoundExceeded { .. })))
        .count();
    assert_eq!((ok, full), (3, 9));
    assert_eq!(stored_addresses(&db).await, 3);
    Ok(())
}

#[tokio::test]
async fn a_document_over_its_bound_is_never_inserted() -> odm::Result<()> {
    let db = common::db().await?;
    let err = db.odm().insert_one(&kate(4)).await.unwrap_err();
    assert!(
        matches!(&err, odm::Error::BoundExceeded { path, max: 3, .. } if path == "addresses"),
        "{err}"
    );
    let err = db
        .odm()
        .insert_many(&[kate(1), Person { id: 2, ..kate(5) }])
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::BoundExceeded { .. }), "{err}");
    let err = db
        .odm()
        .replace_one(&kate(9))
        .upsert(true)
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::BoundExceeded { .. }), "{err}");
    assert!(sent(&db).is_empty(), "refused before sending");
    assert!(stored(&db, "person").await.is_empty());
    Ok(())
}

#[tokio::test]
async fn update_many_refuses_when_any_document_is_full() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .insert_many(&[kate(1), Person { id: 2, ..kate(3) }])
        .await?;
    let err = db
        .odm()
        .update_many::<Person>(Filter::all(), Person::addresses().push(address(7)))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::BoundExceeded { documents: 1, .. }),
        "{err}"
    );
    let lens: Vec<usize> = stored(&db, "person")
        .await
        .iter()
        .map(|d| d.get_array("addresses").unwrap().len())
        .collect();
    assert_eq!(lens, [1, 3], "nothing was written");
    let ok = db
        .odm()
        .update_many(Person::id().eq(1), Person::addresses().push(address(7)))
        .await?;
    assert_eq!(ok.modified_count, 1);
    Ok(())
}

#[tokio::test]
async fn find_one_and_update_is_guarded_too() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&kate(3)).await?;
    let err = db
        .odm()
        .find_one_and_update(Person::id().eq(1), Person::addresses().push(address(5)))
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::BoundExceeded { .. }), "{err}");
    let raw: Document = stored_one(&db, "person", 1).await.unwrap();
    assert_eq!(raw.get_array("addresses").unwrap().len(), 3);
    assert!(!raw
        .get_array("addresses")
        .unwrap()
        .contains(&Bson::Document(
            doc! {"street": "5 Sesame St", "city": "Anytown"}
        )));
    Ok(())
}

fn addresses_bson(n: usize) -> Vec<Bson> {
    (0..n)
        .map(|i| Bson::Document(doc! {"street": format!("{i} Sesame St"), "city": "Anytown"}))
        .collect()
}

#[tokio::test]
async fn a_whole_array_longer_than_its_bound_is_refused_before_sending() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&kate(2)).await?;
    db.commands().clear();
    let too_long: Vec<Update<Person>> = vec![
        Person::addresses().set((0..4).map(address).collect::<Vec<_>>()),
        Update::raw(doc! {"$set": {"addresses": addresses_bson(4)}}),
        Update::raw(doc! {"$push": {"addresses": {"$each": addresses_bson(4)}}}),
    ];
    for update in too_long {
        let err = db
            .odm()
            .update_by_id::<Person>(1, update)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, odm::Error::BoundExceeded { path, max: 3, .. } if path == "addresses"),
            "{err}"
        );
        let err = db
            .odm()
            .update_many::<Person>(Filter::all(), Person::addresses().set(vec![address(0); 4]))
            .await
            .unwrap_err();
        assert!(matches!(err, odm::Error::BoundExceeded { .. }), "{err}");
    }
    assert!(
        sent(&db).is_empty(),
        "refused before sending: {:?}",
        sent(&db)
    );
    assert_eq!(stored_addresses(&db).await, 2);

    // A raw push of several is guarded for as many; a `$slice` within the bound needs no room.
    let err = db
        .odm()
        .update_by_id::<Person>(
            1,
            Update::raw(doc! {"$push": {"addresses": {"$each": addresses_bson(2)}}}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::BoundExceeded { documents: 1, .. }),
        "{err}"
    );
    assert_eq!(stored_addresses(&db).await, 2);
    db.odm()
        .update_by_id::<Person>(
            1,
            Update::raw(doc! {"$push": {"addresses": {"$each": addresses_bson(1)}}}),
        )
        .await?;
    assert_eq!(stored_addresses(&db).await, 3);
    let err = db
        .odm()
        .update_by_id::<Person>(
            1,
            Update::raw(doc! {"$push": {"addresses": addresses_bson(1)[0].clone()}}),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::BoundExceeded { .. }), "{err}");
    db.odm()
        .update_by_id::<Person>(
            1,
            Update::raw(doc! {"$push": {"addresses": {"$each": addresses_bson(5), "$slice": -3}}}),
        )
        .await?;
    assert_eq!(stored_addresses(&db).await, 3);
    // A set within the bound is written.
    db.odm()
        .update_by_id::<Person>(1, Person::addresses().set(vec![address(9)]))
        .await?;
    assert_eq!(stored_addresses(&db).await, 1);
    Ok(())
}

/// `update_many` counts the documents with room before writing; one that fills up before the
/// update reaches it is reported, never skipped silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn update_many_reports_documents_that_filled_up_while_it_ran() -> odm::Result<()> {
    const PEOPLE: i32 = 20;
    let db = common::db().await?;
    let odm = db.odm();
    let mut reported = 0;
    for round in 0..20 {
        odm.delete_many::<Person>(Filter::all()).await?;
        let people: Vec<Person> = (0..PEOPLE).map(|id| Person { id, ..kate(2) }).collect();
        odm.insert_many(&people).await?;
        let fillers = (0..PEOPLE).map(|id| async move {
            odm.update_by_id::<Person>(id, Person::addresses().push(address(100)))
                .await
        });
        let many = odm.update_many::<Person>(
            Filter::all(),
            Person::addresses().push(address(200 + round)),
        );
        let (many, _) = tokio::join!(many, futures_util::future::join_all(fillers));
        let holding = stored(&db, "person")
            .await
            .iter()
            .filter(|d| {
                d.get_array("addresses").unwrap().contains(&Bson::Document(
                    doc! {"street": format!("{} Sesame St", 200 + round), "city": "Anytown"},
                ))
            })
            .count() as u64;
        match many {
            Ok(res) => assert_eq!(res.modified_count, PEOPLE as u64, "Ok means every document"),
            Err(odm::Error::BoundExceeded { documents, .. }) => {
                // Refused before writing (nothing written), or some filled up in between.
                assert!(
                    holding == 0 || holding + documents == PEOPLE as u64,
                    "{holding} + {documents}"
                );
                reported += u64::from(holding > 0);
            }
            Err(e) => return Err(e),
        }
        for d in stored(&db, "person").await {
            assert!(d.get_array("addresses").unwrap().len() <= 3);
        }
    }
    eprintln!("{reported} of 20 rounds reported documents that filled up during the update");
    Ok(())
}

/// Counters of narrow integer types: the server would carry an `$inc` past the type (storing
/// a 64-bit number, or a negative one for an unsigned field) and the document would no longer
/// decode.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "tallies")]
struct Tally {
    #[serde(rename = "_id")]
    id: i32,
    hits: i32,
    small: u8,
    total: u32,
    #[embed(max = 31)]
    days: Vec<Day>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Day {
    day: i32,
    hits: i32,
}

#[tokio::test]
async fn an_increment_never_carries_a_narrow_integer_past_its_type() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let tally = |id, hits| Tally {
        id,
        hits,
        small: 250,
        total: 1,
        days: vec![Day { day: 1, hits }],
    };
    odm.insert_many(&[tally(1, i32::MAX - 1), tally(2, i32::MIN + 1), tally(3, 0)])
        .await?;

    // Up to the bound: written.
    odm.update_by_id::<Tally>(1, Tally::hits().inc(1)).await?;
    assert_eq!(
        stored_one(&db, "tallies", 1)
            .await
            .unwrap()
            .get_i32("hits")
            .ok(),
        Some(i32::MAX)
    );
    odm.update_by_id::<Tally>(2, Tally::hits().inc(-1)).await?;
    assert_eq!(
        stored_one(&db, "tallies", 2)
            .await
            .unwrap()
            .get_i32("hits")
            .ok(),
        Some(i32::MIN)
    );

    // Past it, at both ends: a typed error, the document as it was, still decoding.
    for (id, by) in [(1, 1), (1, i32::MAX), (2, -1), (2, i32::MIN)] {
        let before = stored_one(&db, "tallies", id).await.unwrap();
        let err = odm
            .update_by_id::<Tally>(id, Tally::hits().inc(by))
            .await
            .expect_err("past the bound");
        match &err {
            odm::Error::Overflow {
                collection,
                path,
                ty,
                documents,
                ..
            } => assert_eq!(
                (collection.as_str(), path.as_str(), ty.as_str(), *documents),
                ("tallies", "hits", "i32", 1)
            ),
            other => panic!("expected Overflow, got {other}"),
        }
        assert_eq!(stored_one(&db, "tallies", id).await.unwrap(), before);
        assert!(odm.get::<Tally>(id).await?.is_some(), "still decodes");
    }

    // Unsigned and narrower types, through `find_one_and_update` and `update_many` alike.
    let err = odm
        .find_one_and_update(Tally::id().eq(1), Tally::small().inc(6))
        .await
        .expect_err("250 + 6 > u8::MAX");
    assert!(
        matches!(&err, odm::Error::Overflow { ty, .. } if ty == "u8"),
        "{err}"
    );
    odm.update_by_id::<Tally>(1, Tally::small().inc(5)).await?;
    assert_eq!(
        stored_one(&db, "tallies", 1)
            .await
            .unwrap()
            .get_i32("small")
            .ok(),
        Some(255)
    );
    let err = odm
        .update_many(Filter::all(), Tally::hits().inc(1))
        .await
        .expect_err("tally 1 is at i32::MAX");
    assert!(
        matches!(err, odm::Error::Overflow { documents: 1, .. }),
        "{err}"
    );
    let third = stored_one(&db, "tallies", 3).await.unwrap();
    assert_eq!(
        third.get_i32("hits").ok(),
        Some(0),
        "refused before anything is written"
    );

    // Through an element path: every element must have room.
    let err = odm
        .update_by_id::<Tally>(1, Tally::days().each().hits().inc(2))
        .await
        .expect_err("day 1 of tally 1 is at i32::MAX - 1");
    assert!(matches!(err, odm::Error::Overflow { .. }), "{err}");
    odm.update_by_id::<Tally>(3, Tally::days().each().hits().inc(1))
        .await?;
    let third = stored_one(&db, "tallies", 3).await.unwrap();
    let days = third.get_array("days").unwrap();
    assert_eq!(days[0].as_document().unwrap().get_i32("hits").ok(), Some(1));

    // The filter sent: the value cannot pass the bound.
    odm.update_by_id::<Tally>(3, Tally::total().inc(2)).await?;
    let update = common::last_command(&db, "update");
    let q = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("q")
        .unwrap()
        .clone();
    assert_eq!(
        q,
        doc! { "$and": [{ "_id": 3 }, { "total": { "$not": { "$gt": Bson::Int64(i64::from(u32::MAX) - 2) } } }] }
    );
    Ok(())
}
