//! Writes that race each other inside transactions: an insert taking a summary of a source
//! while that source is deleted must never leave the summary of a deleted document behind.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use denorm::parts::Part;
use denorm::products::{PartSummary, Product};
use futures_util::TryStreamExt;
use odm::bson::{oid::ObjectId, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;

const PAIRS: usize = 500;

fn part(n: usize) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("p-{n}"),
        name: format!("part {n}"),
        qty: 1,
        product: None,
        product_name: String::new(),
        product_catalog_number: 0,
    }
}

fn product_of(part: &Part, n: usize) -> Product {
    Product {
        id: ObjectId::new(),
        name: format!("product {n}"),
        manufacturer: "ACME".into(),
        catalog_number: n as i64,
        parts: vec![PartSummary {
            id: Ref::new(part.id),
            name: String::new(),
        }],
    }
}

/// The caller's own transaction around one insert, run again while the server says the
/// transaction may succeed if retried, as a caller of a session is expected to. Returns
/// whether the product was inserted (a part deleted first is a dangling reference).
async fn insert_in_transaction(odm: &Odm, product: &Product) -> odm::Result<bool> {
    loop {
        let mut session = odm.start_session().await?;
        session.start_transaction().await?;
        let inserted = odm.insert_one(product).session(&mut session).await;
        let outcome = match inserted {
            Ok(_) => session.commit_transaction().await.map_err(odm::Error::from),
            Err(e) => {
                let _ = session.abort_transaction().await;
                Err(e)
            }
        };
        match outcome {
            Ok(()) => return Ok(true),
            Err(odm::Error::DanglingReference { .. }) => return Ok(false),
            Err(e) if e.is_transient() => continue,
            Err(e) => return Err(e),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn inserts_racing_the_delete_of_their_source_leave_no_summary_of_it() -> odm::Result<()> {
    let db = TestDb::new().await?;
    assert!(db.odm().supports_transactions().await?);
    let parts: Vec<Part> = (0..PAIRS).map(part).collect();
    db.odm().insert_many(&parts).await?;
    let odm = db.odm();

    let pairs = parts.iter().enumerate().map(|(n, p)| async move {
        let product = product_of(p, n);
        // The delete runs in the ODM's own transaction, the insert in the caller's.
        let (inserted, deleted) = tokio::join!(
            insert_in_transaction(odm, &product),
            odm.delete_one(Part::id().eq(p.id))
        );
        Ok::<_, odm::Error>((inserted?, deleted?))
    });
    let outcomes = futures_util::future::try_join_all(pairs).await?;
    assert!(
        outcomes.iter().all(|(_, deleted)| *deleted == 1),
        "every part is deleted"
    );
    let inserted = outcomes.iter().filter(|(i, _)| *i).count();
    eprintln!("{inserted} of {PAIRS} products inserted before their part was deleted");

    let products: Vec<Document> = db
        .raw()
        .collection::<Document>("products")
        .find(Document::new())
        .await?
        .try_collect()
        .await?;
    assert_eq!(products.len(), inserted);
    let left = products
        .iter()
        .filter(|d| !d.get_array("parts").unwrap().is_empty())
        .count();
    let left_ids: Vec<&Bson> = products
        .iter()
        .flat_map(|d| d.get_array("parts").unwrap())
        .collect();
    assert_eq!(
        left, 0,
        "{left} of {PAIRS} products keep a summary of a deleted part ({inserted} inserted): {left_ids:?}"
    );
    Ok(())
}

/// 100 concurrent inserts of products copying parts 1 and 2, each sent the way a user sends
/// it (no session of the caller's), while part 1 is deleted, over several rounds: afterwards
/// no product lists part 1, and every product lists part 2. Run with the ODM's transactions
/// (the default on a replica set) and without them.
async fn default_mode_inserts_racing_a_delete(odm: &Odm, db: &TestDb) -> odm::Result<()> {
    const ROUNDS: usize = 5;
    const INSERTS: usize = 100;
    let products = db.raw().collection::<Document>("products");
    for round in 0..ROUNDS {
        let (one, two) = (part(2 * round), part(2 * round + 1));
        odm.insert_many([one.clone(), two.clone()].as_slice())
            .await?;
        let inserts = (0..INSERTS).map(|n| {
            let mut product = product_of(&one, round * INSERTS + n);
            product.parts.push(PartSummary {
                id: Ref::new(two.id),
                name: String::new(),
            });
            async move {
                match odm.insert_one(&product).await {
                    Ok(_) => Ok(true),
                    // Read after the delete landed: refused, nothing written.
                    Err(odm::Error::DanglingReference { .. }) => Ok(false),
                    Err(e) => Err(e),
                }
            }
        });
        let delete = async {
            // Let some inserts start first.
            tokio::task::yield_now().await;
            odm.delete_one(Part::id().eq(one.id)).await
        };
        let (inserted, deleted) = tokio::join!(futures_util::future::try_join_all(inserts), delete);
        assert_eq!(deleted?, 1);
        let inserted = inserted?.into_iter().filter(|i| *i).count();
        let stored: Vec<Document> = products
            .find(odm::bson::doc! { "parts.id": two.id })
            .await?
            .try_collect()
            .await?;
        assert_eq!(stored.len(), inserted, "round {round}: every insert landed");
        let stale = stored
            .iter()
            .filter(|d| {
                d.get_array("parts")
                    .unwrap()
                    .iter()
                    .any(|s| s.as_document().unwrap().get_object_id("id").ok() == Some(one.id))
            })
            .count();
        eprintln!("round {round}: {inserted} of {INSERTS} inserted, {stale} list the deleted part");
        assert_eq!(
            stale, 0,
            "round {round}: products keep a summary of the deleted part"
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn default_mode_inserts_racing_the_delete_of_a_source_keep_no_summary_of_it(
) -> odm::Result<()> {
    let db = TestDb::new().await?;
    assert!(db.odm().supports_transactions().await?);
    default_mode_inserts_racing_a_delete(db.odm(), &db).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn inserts_racing_a_delete_without_transactions_keep_no_summary_of_it() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm().clone().without_transactions();
    default_mode_inserts_racing_a_delete(&odm, &db).await
}

/// `update_many` of a copied field and a push onto a bounded array: the cascade finds the
/// sources' ids, then updates them; a document that fills up in between is not pushed past
/// its bound (the update keeps the room guard), and the update reports it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cascading_update_many_keeps_the_bound_of_a_document_filled_meanwhile() -> odm::Result<()>
{
    use denorm::tasks::{Person, Task};
    use odm::bson::doc;
    use std::sync::atomic::Ordering;

    let db = TestDb::new().await?;
    // Kate's list has room for one more task; Bob's has plenty.
    let kate = ObjectId::new();
    let bob = ObjectId::new();
    let fill: Vec<Bson> = (0..999).map(|_| Bson::ObjectId(ObjectId::new())).collect();
    let people = db.raw().collection::<Document>("people");
    people
        .insert_one(doc! { "_id": kate, "name": "Kate", "tasks": fill })
        .await?;
    people
        .insert_one(doc! { "_id": bob, "name": "Bob", "tasks": [] })
        .await?;

    // Right after the cascade's `find` of the ids, another client takes Kate's last slot.
    let (odm, armed) = common::act_after_next_find(&db, move |database| async move {
        database
            .collection::<Document>("people")
            .update_one(
                doc! { "_id": kate },
                doc! { "$push": { "tasks": ObjectId::new() } },
            )
            .await
            .expect("the concurrent push");
    })
    .await?;

    let task = Ref::<Task>::new(ObjectId::new());
    armed.store(true, Ordering::SeqCst);
    let err = odm
        .update_many(
            Filter::<Person>::all(),
            Person::name()
                .set("renamed")
                .and(Person::tasks().push(task)),
        )
        .await
        .expect_err("Kate filled up while the update ran");
    assert!(!armed.load(Ordering::SeqCst), "the concurrent push ran");
    assert!(matches!(err, odm::Error::BoundExceeded { .. }), "{err}");
    let stored: Vec<Document> = people.find(doc! {}).await?.try_collect().await?;
    for person in &stored {
        let tasks = person.get_array("tasks").unwrap();
        assert!(tasks.len() <= 1000, "{} tasks", tasks.len());
    }
    let bob_doc = stored
        .iter()
        .find(|d| d.get_object_id("_id").ok() == Some(bob))
        .unwrap();
    assert_eq!(bob_doc.get_array("tasks").unwrap().len(), 1, "Bob had room");
    Ok(())
}
