//! Writes that race each other inside transactions: an insert taking a summary of a source
//! while that source is deleted must never leave the summary of a deleted document behind.
//!
//! Work that ends on one parent document, from many writers at once, on a machine that is also
//! busy: the ODM's maintenance of one parent degrades into waiting, never into failures. 100
//! deletes of log messages that feed one host's latest-100 array, 100 reassignments of tasks to
//! one owner, and 100 renames of parts whose summaries live in one product (cascades in
//! transactions), each with two threads spinning on the CPU meanwhile; every operation
//! succeeds, and what is stored is read back raw. The same holds for 100 renames in
//! transactions racing 200 inserts that copy the renamed parts: the inserts correct their own
//! copies only, never the documents the renames' transactions hold.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use std::time::Duration;

use denorm::logs::{Host, LogMsg};
use denorm::parts::Part;
use denorm::products::{PartSummary, Product};
use denorm::tasks::{Person, Task};
use futures_util::TryStreamExt;
use odm::bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use odm::prelude::*;
use odm::testing::{BusyCpu, TestDb};

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
    let db = common::db().await?;
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
    let db = common::db().await?;
    assert!(db.odm().supports_transactions().await?);
    default_mode_inserts_racing_a_delete(db.odm(), &db).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn inserts_racing_a_delete_without_transactions_keep_no_summary_of_it() -> odm::Result<()> {
    let db = common::db().await?;
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

    let db = common::db().await?;
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

// Hot parents.

const WRITERS: usize = 100;

/// Runs every future at once on the runtime's threads; returns the errors.
async fn all_at_once<F>(futures: Vec<F>) -> Vec<String>
where
    F: std::future::Future<Output = odm::Result<()>> + Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut errors = Vec::new();
    for h in handles {
        if let Err(e) = h.await.expect("no panic") {
            errors.push(e.to_string());
        }
    }
    errors
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_deletes_feeding_one_latest_array_all_succeed_on_a_busy_machine(
) -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm().clone();
    let host = Host {
        id: ObjectId::new(),
        name: "www.example.com".into(),
        ipaddr: "127.66.66.66".into(),
        logmsgs: Vec::new(),
    };
    odm.insert_one(&host).await?;
    let base = DateTime::now().timestamp_millis();
    let messages: Vec<LogMsg> = (0..2 * WRITERS as i64)
        .map(|n| LogMsg {
            id: ObjectId::new(),
            time: DateTime::from_millis(base + n),
            message: format!("message {n}"),
            host: Ref::new(host.id),
            ipaddr: String::new(),
        })
        .collect();
    odm.insert_many(&messages).await?;

    // The newest 100, each in the host's array: every delete recomputes it.
    let busy = BusyCpu::threads(2, Duration::from_secs(120));
    let deletes = messages[WRITERS..]
        .iter()
        .map(|m| {
            let (odm, id) = (odm.clone(), m.id);
            async move { odm.delete_one(LogMsg::id().eq(id)).await.map(|_| ()) }
        })
        .collect();
    let errors = all_at_once(deletes).await;
    drop(busy);
    assert!(
        errors.is_empty(),
        "{} of {WRITERS} deletes failed, e.g. {:?}",
        errors.len(),
        errors.first()
    );

    // The array holds the newest 100 of the messages left, newest last.
    let stored = db
        .raw()
        .collection::<Document>("hosts")
        .find_one(doc! { "_id": host.id })
        .await?
        .expect("the host");
    let kept: Vec<String> = stored
        .get_array("logmsgs")
        .unwrap()
        .iter()
        .map(|s| {
            s.as_document()
                .unwrap()
                .get_str("message")
                .unwrap()
                .to_owned()
        })
        .collect();
    let left: Vec<String> = db
        .raw()
        .collection::<Document>("logmsg")
        .find(doc! { "host": host.id })
        .sort(doc! { "time": 1 })
        .await?
        .try_collect::<Vec<_>>()
        .await?
        .iter()
        .map(|d| d.get_str("message").unwrap().to_owned())
        .collect();
    assert_eq!(left.len(), WRITERS);
    assert_eq!(kept, left);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_reassignments_to_one_owner_all_succeed_on_a_busy_machine() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm().clone();
    let person = |name: &str| Person {
        id: ObjectId::new(),
        name: name.into(),
        tasks: Vec::new(),
    };
    let (kate, bob) = (person("Kate"), person("Bob"));
    odm.insert_many(&[kate.clone(), bob.clone()]).await?;
    let tasks: Vec<Task> = (0..WRITERS)
        .map(|n| Task {
            id: ObjectId::new(),
            description: format!("task {n}"),
            due_date: DateTime::now(),
            owner: Ref::new(bob.id),
            owner_name: String::new(),
        })
        .collect();
    odm.insert_many(&tasks).await?;

    let busy = BusyCpu::threads(2, Duration::from_secs(120));
    let moves = tasks
        .iter()
        .map(|t| {
            let (odm, id) = (odm.clone(), t.id);
            async move { odm.reassign(Task::owner(), id, kate.id).await.map(|_| ()) }
        })
        .collect();
    let errors = all_at_once(moves).await;
    drop(busy);
    assert!(
        errors.is_empty(),
        "{} of {WRITERS} reassignments failed, e.g. {:?}",
        errors.len(),
        errors.first()
    );
    let people = db.raw().collection::<Document>("people");
    let kate_doc = people.find_one(doc! { "_id": kate.id }).await?.unwrap();
    let bob_doc = people.find_one(doc! { "_id": bob.id }).await?.unwrap();
    assert_eq!(kate_doc.get_array("tasks").unwrap().len(), WRITERS);
    assert!(bob_doc.get_array("tasks").unwrap().is_empty());
    let moved = db
        .raw()
        .collection::<Document>("tasks")
        .count_documents(doc! { "owner": kate.id, "owner_name": "Kate" })
        .await?;
    assert_eq!(moved, WRITERS as u64);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_renames_cascading_into_one_product_all_succeed_on_a_busy_machine(
) -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm().clone();
    let parts: Vec<Part> = (0..WRITERS)
        .map(|n| Part {
            id: ObjectId::new(),
            partno: format!("p-{n}"),
            name: format!("part {n}"),
            qty: 1,
            product: None,
            product_name: String::new(),
            product_catalog_number: 0,
        })
        .collect();
    odm.insert_many(&parts).await?;
    let product = Product {
        id: ObjectId::new(),
        name: "smoke shifter".into(),
        manufacturer: "ACME".into(),
        catalog_number: 1234,
        parts: parts
            .iter()
            .map(|p| PartSummary {
                id: Ref::new(p.id),
                name: String::new(),
            })
            .collect(),
    };
    odm.insert_one(&product).await?;

    let busy = BusyCpu::threads(2, Duration::from_secs(120));
    let renames = parts
        .iter()
        .map(|p| {
            let (odm, id, name) = (odm.clone(), p.id, format!("{}, zinc", p.name));
            async move {
                odm.update_by_id::<Part>(id, Part::name().set(name))
                    .transaction(odm::TransactionMode::Always)
                    .await
                    .map(|_| ())
            }
        })
        .collect();
    let errors = all_at_once(renames).await;
    drop(busy);
    assert!(
        errors.is_empty(),
        "{} of {WRITERS} renames failed, e.g. {:?}",
        errors.len(),
        errors.first()
    );
    let stored = db
        .raw()
        .collection::<Document>("products")
        .find_one(doc! { "_id": product.id })
        .await?
        .expect("the product");
    let names: Vec<&str> = stored
        .get_array("parts")
        .unwrap()
        .iter()
        .map(|s| s.as_document().unwrap().get_str("name").unwrap())
        .collect();
    let want: Vec<String> = (0..WRITERS).map(|n| format!("part {n}, zinc")).collect();
    assert_eq!(names, want);
    Ok(())
}

type Work = std::pin::Pin<Box<dyn std::future::Future<Output = odm::Result<()>> + Send>>;

/// Inserts copying parts settle their own copies only: 100 renames in transactions racing 200
/// inserts that copy the renamed parts, on a busy machine, all succeed and leave every summary
/// naming its part as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn renames_in_transactions_racing_inserts_that_copy_them_all_succeed_on_a_busy_machine(
) -> odm::Result<()> {
    const PARTS: usize = 20;
    const RENAMES: usize = 5;
    const INSERTS: usize = 200;
    let db = common::db().await?;
    let odm = db.odm().clone();
    let parts: Vec<Part> = (0..PARTS).map(part).collect();
    odm.insert_many(&parts).await?;

    let busy = BusyCpu::threads(2, Duration::from_secs(120));
    let started = std::time::Instant::now();
    let mut work: Vec<Work> = Vec::new();
    for p in &parts {
        let (odm, id, name) = (odm.clone(), p.id, p.name.clone());
        work.push(Box::pin(async move {
            for round in 1..=RENAMES {
                odm.update_by_id::<Part>(id, Part::name().set(format!("{name} v{round}")))
                    .transaction(odm::TransactionMode::Always)
                    .await?;
            }
            Ok(())
        }));
    }
    for n in 0..INSERTS {
        let odm = odm.clone();
        let (a, b) = (parts[n % PARTS].id, parts[(n * 7 + 3) % PARTS].id);
        let mut product = product_of(&parts[n % PARTS], n);
        if a != b {
            product.parts.push(PartSummary {
                id: Ref::new(b),
                name: String::new(),
            });
        }
        work.push(Box::pin(async move {
            odm.insert_one(&product).await.map(|_| ())
        }));
    }
    let errors = all_at_once(work).await;
    let took = started.elapsed();
    drop(busy);
    // The failures by kind (the start of their message), for the report below.
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for e in &errors {
        *kinds.entry(e.chars().take(60).collect()).or_default() += 1;
    }
    assert!(
        errors.is_empty(),
        "{} of {} operations failed in {took:?}: {kinds:#?}",
        errors.len(),
        PARTS + INSERTS,
    );
    // Every summary names its part as the part is now, read back raw.
    let names: std::collections::HashMap<Bson, String> = db
        .raw()
        .collection::<Document>("parts")
        .find(doc! {})
        .await?
        .try_collect::<Vec<_>>()
        .await?
        .into_iter()
        .map(|p| {
            (
                p.get("_id").unwrap().clone(),
                p.get_str("name").unwrap().to_owned(),
            )
        })
        .collect();
    assert!(names.values().all(|n| n.ends_with(&format!("v{RENAMES}"))));
    let products: Vec<Document> = db
        .raw()
        .collection::<Document>("products")
        .find(doc! {})
        .await?
        .try_collect()
        .await?;
    assert_eq!(products.len(), INSERTS);
    let mut stale = 0;
    for product in &products {
        for s in product.get_array("parts").unwrap() {
            let s = s.as_document().unwrap();
            if names[s.get("id").unwrap()] != s.get_str("name").unwrap() {
                stale += 1;
            }
        }
    }
    assert_eq!(
        stale, 0,
        "summaries that do not name their part as it is now"
    );
    eprintln!(
        "{} renames and {INSERTS} inserts in {took:?}",
        PARTS * RENAMES
    );
    Ok(())
}

/// The correction of an insert's copies does not keep its connection while a transaction
/// holds the document it corrects: the server makes a write outside a transaction wait for
/// such a transaction, and a correction that kept the only connection of its pool would stop
/// the transaction's own commands, and every other operation, until the server ended the
/// transaction 60 s later. Here the client keeps one connection; another client renames the
/// part right after the insert's first read, then holds the new product in a transaction
/// right after its re-read. A `count` through the insert's client must get the connection
/// while the product is held (the holder lets go only once the count is done, or after
/// 20 s); the product ends with the new name, read back raw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correction_waiting_on_a_held_document_lets_its_connection_go() -> odm::Result<()> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex, OnceLock};
    let db = common::db().await?;
    let p = part(1);
    db.odm().insert_one(&p).await?;
    let product = product_of(&p, 1);
    let (pid, product_id) = (p.id, product.id);
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (ended_tx, ended_rx) = mpsc::channel::<&'static str>();
    let holder = Arc::new(Mutex::new(Some((release_rx, ended_tx))));
    let holding = Arc::new(AtomicBool::new(false));
    let rearm: Arc<OnceLock<Arc<AtomicBool>>> = Arc::default();
    let step = Arc::new(AtomicUsize::new(0));
    let uri = odm::testing::test_uri()?;
    let (again, now_held) = (rearm.clone(), holding.clone());
    let act = move |database: odm::mongodb::Database| {
        let (again, step, holder, uri) = (again.clone(), step.clone(), holder.clone(), uri.clone());
        let now_held = now_held.clone();
        async move {
            if step.fetch_add(1, Ordering::SeqCst) == 0 {
                // After the insert's first read: the part is renamed, the next read armed.
                database
                    .collection::<Document>("parts")
                    .update_one(doc! { "_id": pid }, doc! { "$set": { "name": "renamed" } })
                    .await
                    .expect("the rename");
                again.get().expect("set").store(true, Ordering::SeqCst);
                return;
            }
            // After the re-read: a transaction of another client holds the new product, until
            // told to let go (or 20 s).
            let (release, ended) = holder.lock().unwrap().take().expect("once");
            let (held_tx, held_rx) = mpsc::channel::<()>();
            let name = database.name().to_owned();
            common::with_own_client(uri, move |client| async move {
                {
                    let mut session = client.start_session().await.expect("session");
                    session.start_transaction().await.expect("transaction");
                    client
                        .database(&name)
                        .collection::<Document>("products")
                        .update_one(doc! { "_id": product_id }, doc! { "$set": { "held": 1 } })
                        .session(&mut session)
                        .await
                        .expect("the holding write");
                    held_tx.send(()).expect("signal");
                    let how = match release.recv_timeout(Duration::from_secs(20)) {
                        Ok(()) => "released",
                        Err(_) => "timed out",
                    };
                    session.abort_transaction().await.expect("abort");
                    ended.send(how).expect("signal");
                }
            });
            held_rx
                .recv_timeout(Duration::from_secs(20))
                .expect("the product is held");
            now_held.store(true, Ordering::SeqCst);
        }
    };
    let (odm, armed, log) = common::act_after_next_find_pooled(&db, Some(1), act).await?;
    rearm.set(armed.clone()).expect("once");
    armed.store(true, Ordering::SeqCst);
    let insert = {
        let (odm, product) = (odm.clone(), product.clone());
        tokio::spawn(async move { odm.insert_one(&product).await })
    };
    // Once the product is held and the insert has sent its correction of it, another
    // operation of the same client gets the one connection.
    let correcting = || {
        holding.load(Ordering::SeqCst)
            && log.lock().unwrap().iter().any(|c| {
                c.name == "update"
                    && c.command
                        .as_ref()
                        .is_some_and(|d| d.get_str("update").ok() == Some("products"))
            })
    };
    for _ in 0..2000 {
        if correcting() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        correcting(),
        "the product was held, and its correction sent"
    );
    assert_eq!(odm.count(Filter::<Part>::all()).await?, 1);
    release_tx.send(()).expect("the holder waits");
    let how = tokio::task::spawn_blocking(move || ended_rx.recv().expect("ended"))
        .await
        .expect("join");
    assert_eq!(
        how, "released",
        "the count waited for the transaction to end"
    );
    insert.await.expect("no panic")?;
    let stored = db
        .raw()
        .collection::<Document>("products")
        .find_one(doc! { "_id": product_id })
        .await?
        .expect("inserted");
    let summary = stored.get_array("parts").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(summary.get_str("name").unwrap(), "renamed");
    Ok(())
}
