//! The caller's transactions (`Odm::transaction`): every write of the body lands together or
//! not at all, a write conflict runs the body again (within the retry deadline), operations
//! that open transactions of their own join the caller's, and a deployment without
//! transactions is a typed error. What landed is read back with the raw driver.

#[path = "common/catalog.rs"]
mod catalog;
mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use catalog::*;
use common::{sent, stored, stored_one};
use odm::bson::{doc, DateTime, Document};
use odm::counters::Hours;
use odm::prelude::*;
use odm::testing::TestDb;
use odm::{Error, TransactionMode};

/// An account whose balance transfers move.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "accounts")]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
    balance: i64,
}

/// A brand's name copied into its gadgets: an update of the name cascades.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "brands")]
struct Brand {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "gadgets")]
struct Gadget {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "nullify")]
    brand: Option<Ref<Brand>>,
    #[denormalize(from = "Brand", via = "brand", fields = "name")]
    #[serde(default)]
    brand_name: String,
}

/// A tree: a move rewrites a subtree in a transaction of its own when run alone.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "subjects", tree(on_delete = "lift"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

/// Counters: one upsert per event, returned as an `InSession`.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "visits", counters(key = "page", day = "day"))]
struct Visits {
    #[serde(rename = "_id")]
    id: ObjectId,
    page: i32,
    day: DateTime,
    total: i64,
    hour: Hours,
}

fn balances(docs: &[Document]) -> Vec<(i32, i64)> {
    docs.iter()
        .map(|d| (d.get_i32("_id").unwrap(), d.get_i64("balance").unwrap()))
        .collect()
}

async fn two_accounts(db: &TestDb) -> odm::Result<()> {
    db.odm()
        .insert_many(&[
            Account {
                id: 1,
                balance: 100,
            },
            Account { id: 2, balance: 0 },
        ])
        .await?;
    // The `hello` that tells a replica set, sent once per `Odm`, is not counted below.
    assert!(db.odm().supports_transactions().await?);
    sent(db);
    Ok(())
}

#[tokio::test]
async fn a_body_commits_its_writes_together() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    two_accounts(&db).await?;
    // ANCHOR: transfer
    let moved = odm
        .transaction(async |tx| {
            odm.update_by_id::<Account>(1, Account::balance().inc(-30))
                .session(tx.session())
                .await?;
            odm.update_by_id::<Account>(2, Account::balance().inc(30))
                .session(tx.session())
                .await?;
            Ok(30)
        })
        .await?;
    // ANCHOR_END: transfer
    assert_eq!(moved, 30);
    assert_eq!(sent(&db), ["update", "update", "commitTransaction"]);
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 70), (2, 30)]);
    Ok(())
}

#[tokio::test]
async fn a_body_error_aborts_and_nothing_lands() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    two_accounts(&db).await?;
    let runs = AtomicU32::new(0);
    let refused = odm
        .transaction(async |tx| {
            runs.fetch_add(1, Ordering::SeqCst);
            odm.update_by_id::<Account>(1, Account::balance().inc(-500))
                .session(tx.session())
                .await?;
            odm.insert_one(&Account {
                id: 3,
                balance: 500,
            })
            .session(tx.session())
            .await?;
            let left = odm.get::<Account>(1).session(tx.session()).await?;
            if left.is_some_and(|a| a.balance < 0) {
                return Err(Error::Unsupported("insufficient funds".into()));
            }
            Ok(())
        })
        .await;
    assert!(
        matches!(&refused, Err(Error::Unsupported(m)) if m == "insufficient funds"),
        "{refused:?}"
    );
    // Not retried: the error is not transient.
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(sent(&db), ["update", "insert", "find", "abortTransaction"]);
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 100), (2, 0)]);
    Ok(())
}

/// Two transactions increment the same document; the second writes while the first holds it,
/// conflicts, and runs again after the first commits. Both increments and both log entries
/// land exactly once.
#[tokio::test]
async fn a_write_conflict_runs_the_body_again_and_both_land_once() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    two_accounts(&db).await?;
    let first_wrote = tokio::sync::Notify::new();
    let second_conflicted = tokio::sync::Notify::new();
    let (first_runs, second_runs) = (AtomicU32::new(0), AtomicU32::new(0));
    let first = odm.transaction(async |tx| {
        first_runs.fetch_add(1, Ordering::SeqCst);
        odm.update_by_id::<Account>(2, Account::balance().inc(1))
            .session(tx.session())
            .await?;
        odm.insert_one(&Account { id: 10, balance: 1 })
            .session(tx.session())
            .await?;
        if tx.attempt() == 1 {
            first_wrote.notify_one();
            // Holds the document until the other has met it (bounded: never a hang).
            let _ =
                tokio::time::timeout(Duration::from_secs(5), second_conflicted.notified()).await;
        }
        Ok(())
    });
    let second = odm.transaction(async |tx| {
        second_runs.fetch_add(1, Ordering::SeqCst);
        if tx.attempt() == 1 {
            first_wrote.notified().await;
        }
        odm.insert_one(&Account { id: 20, balance: 1 })
            .session(tx.session())
            .await?;
        let wrote = odm
            .update_by_id::<Account>(2, Account::balance().inc(1))
            .session(tx.session())
            .await;
        if let Err(e) = &wrote {
            assert!(e.is_transient(), "{e:?}");
            second_conflicted.notify_one();
        }
        wrote?;
        Ok(())
    });
    let (a, b) = tokio::join!(first, second);
    a?;
    b?;
    assert_eq!(first_runs.load(Ordering::SeqCst), 1);
    assert!(
        second_runs.load(Ordering::SeqCst) >= 2,
        "the second was not run again"
    );
    assert_eq!(
        balances(&stored(&db, "accounts").await),
        [(1, 100), (2, 2), (10, 1), (20, 1)]
    );
    Ok(())
}

/// A body that conflicts every time (another transaction holds the document and never
/// commits) returns the last transient error once the deadline has passed.
#[tokio::test]
async fn a_body_that_always_conflicts_stops_at_the_deadline() -> odm::Result<()> {
    let db = common::db().await?;
    two_accounts(&db).await?;
    let deadline = Duration::from_millis(400);
    let odm = db.odm().clone().with_retry_deadline(deadline);
    let mut holder = db.raw().client().start_session().await?;
    holder.start_transaction().await?;
    db.raw()
        .collection::<Document>("accounts")
        .update_one(doc! {"_id": 2}, doc! {"$inc": {"balance": 1000}})
        .session(&mut holder)
        .await?;
    let runs = AtomicU32::new(0);
    let start = Instant::now();
    let outcome = odm
        .transaction(async |tx| {
            runs.fetch_add(1, Ordering::SeqCst);
            odm.update_by_id::<Account>(2, Account::balance().inc(1))
                .session(tx.session())
                .await?;
            Ok(())
        })
        .await;
    let took = start.elapsed();
    holder.abort_transaction().await?;
    let e = outcome.expect_err("the document stayed held");
    assert!(e.is_transient(), "{e:?}");
    assert!(runs.load(Ordering::SeqCst) >= 2, "never retried");
    assert!(took >= deadline, "gave up early: {took:?}");
    assert!(took < deadline + Duration::from_secs(2), "{took:?}");
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 100), (2, 0)]);
    Ok(())
}

/// A body may be run again: what it captures is borrowed, never consumed, and the context form
/// gives a future that is `Send` (spawned here).
#[tokio::test]
async fn the_context_form_runs_in_a_spawned_task() -> odm::Result<()> {
    let db = common::db().await?;
    two_accounts(&db).await?;
    let odm = db.odm().clone();
    let done = tokio::spawn(async move {
        // ANCHOR: transaction_with
        odm.transaction_with(&(odm.clone(), 25_i64), |tx, (odm, amount)| {
            Box::pin(async move {
                odm.update_by_id::<Account>(1, Account::balance().inc(-amount))
                    .session(tx.session())
                    .await?;
                odm.update_by_id::<Account>(2, Account::balance().inc(*amount))
                    .session(tx.session())
                    .await?;
                Ok(())
            })
        })
        .await
        // ANCHOR_END: transaction_with
    });
    done.await.expect("task")?;
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 75), (2, 25)]);
    Ok(())
}

/// Every operation that opens a transaction of its own when run alone (reassign, a delete
/// with rules, a tree move, a cascade told `Always`) joins the caller's: one
/// `commitTransaction` for all, and an abort takes all of them back; populate and counters
/// read and write in it too.
#[tokio::test]
async fn operations_with_transactions_of_their_own_join_the_callers() -> odm::Result<()> {
    for commit in [false, true] {
        let db = common::db().await?;
        let odm = db.odm();
        let (ann, bob) = (person("Ann"), person("Bob"));
        odm.insert_many(&[ann.clone(), bob.clone()]).await?;
        let task = Task {
            id: ObjectId::new(),
            description: "write".into(),
            due_date: DateTime::from_millis(0),
            owner: Ref::new(ann.id),
        };
        odm.insert_one(&task).await?;
        let acme = Supplier {
            id: ObjectId::new(),
            name: "Acme".into(),
            country: "FR".into(),
        };
        odm.insert_one(&acme).await?;
        let bolt = Part {
            id: ObjectId::new(),
            partno: "b-1".into(),
            name: "bolt".into(),
            qty: 1,
            cost: 0.0,
            price: 0.0,
            supplier: Some(Ref::new(acme.id)),
        };
        odm.insert_one(&bolt).await?;
        let kit = Product {
            id: ObjectId::new(),
            name: "kit".into(),
            manufacturer: "m".into(),
            catalog_number: 1,
            parts: vec![Ref::new(bolt.id)],
        };
        odm.insert_one(&kit).await?;
        odm.insert_one(&Brand {
            id: 1,
            name: "Old".into(),
        })
        .await?;
        odm.insert_one(&Gadget {
            id: 1,
            brand: Some(Ref::new(1)),
            brand_name: String::new(),
        })
        .await?;
        for (id, parent) in [("a", None), ("b", None), ("c", Some("a"))] {
            odm.insert_one(&Subject {
                id: id.into(),
                parent: parent.map(|p: &str| Ref::new(p.to_owned())),
                ancestors: vec![],
            })
            .await?;
        }
        sent(&db);

        let outcome = odm
            .transaction(async |tx| {
                odm.reassign(Task::owner(), task.id, bob.id)
                    .session(tx.session())
                    .await?;
                odm.delete_one(Supplier::id_field().eq(acme.id))
                    .session(tx.session())
                    .await?;
                odm.tree::<Subject>()
                    .move_under("c".to_owned(), "b".to_owned())
                    .session(tx.session())
                    .await?;
                odm.update_by_id::<Brand>(1, Brand::name().set("New".to_owned()))
                    .transaction(TransactionMode::Always)
                    .session(tx.session())
                    .await?;
                let kits = odm
                    .find(Product::id_field().eq(kit.id))
                    .populate(Product::parts())
                    .session(tx.session())
                    .await?;
                assert_eq!(kits.len(), 1);
                odm.counters::<Visits>()
                    .record(7, DateTime::from_millis(0))
                    .session(tx.session())
                    .await?;
                if commit {
                    Ok(())
                } else {
                    Err(Error::Unsupported("changed my mind".into()))
                }
            })
            .await;
        let commands = sent(&db);
        let count = |name: &str| commands.iter().filter(|c| *c == name).count();
        if commit {
            outcome?;
            assert_eq!(count("commitTransaction"), 1, "{commands:?}");
            assert_eq!(count("abortTransaction"), 0, "{commands:?}");
        } else {
            assert!(matches!(outcome, Err(Error::Unsupported(_))));
            assert_eq!(count("commitTransaction"), 0, "{commands:?}");
            assert_eq!(count("abortTransaction"), 1, "{commands:?}");
        }
        let owner = stored_one(&db, "tasks", task.id).await.expect("task");
        let supplier = stored_one(&db, "suppliers", acme.id).await;
        let part = stored_one(&db, "parts", bolt.id).await.expect("part");
        let c = stored_one(&db, "subjects", "c").await.expect("c");
        let gadget = stored_one(&db, "gadgets", 1).await.expect("gadget");
        let visits = stored(&db, "visits").await;
        if commit {
            assert_eq!(owner.get_object_id("owner").unwrap(), bob.id);
            assert!(supplier.is_none());
            assert!(part.get("supplier").is_some_and(|s| s.as_null().is_some()));
            assert_eq!(c.get_str("parent").unwrap(), "b");
            assert_eq!(gadget.get_str("brand_name").unwrap(), "New");
            assert_eq!(visits.len(), 1);
        } else {
            assert_eq!(owner.get_object_id("owner").unwrap(), ann.id);
            assert!(supplier.is_some());
            assert_eq!(part.get_object_id("supplier").unwrap(), acme.id);
            assert_eq!(c.get_str("parent").unwrap(), "a");
            assert_eq!(gadget.get_str("brand_name").unwrap(), "Old");
            assert!(visits.is_empty());
        }
    }
    Ok(())
}

fn person(name: &str) -> Person {
    Person {
        id: ObjectId::new(),
        name: name.into(),
        tasks: vec![],
    }
}

/// A standalone server (no replica set) runs no transactions: the typed error, before the
/// body runs.
#[tokio::test]
async fn a_standalone_server_is_a_typed_error() -> odm::Result<()> {
    let server = common::Standalone::start();
    let odm = Odm::connect(&server.uri, "standalone_txn")
        .await?
        .with_catalog(common::catalog());
    let runs = AtomicU32::new(0);
    let outcome = odm
        .transaction(async |tx| {
            runs.fetch_add(1, Ordering::SeqCst);
            odm.insert_one(&Account { id: 1, balance: 0 })
                .session(tx.session())
                .await?;
            Ok(())
        })
        .await;
    assert!(
        matches!(&outcome, Err(Error::TransactionsUnsupported { operation, .. }) if operation == "Odm::transaction"),
        "{outcome:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    Ok(())
}

/// A commit whose reply is lost may or may not have landed (`UnknownTransactionCommitResult`):
/// the transaction is committed again, which the server answers for the same transaction, and
/// not run again (which would move the money twice). Here the replies of the first two commits
/// are lost (the driver retries a commit once by itself, then the ODM does): the transfer lands
/// once, after three `commitTransaction`s. With no time left to retry, the error is returned with
/// its label, and what it says is true: the transfer may have landed, and here it did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_commit_reply_commits_again_and_lands_once() -> odm::Result<()> {
    let db = common::db().await?;
    two_accounts(&db).await?;
    let transfer = async |odm: &odm::Odm| {
        odm.transaction(async |tx| {
            odm.update_by_id::<Account>(1, Account::balance().inc(-30))
                .session(tx.session())
                .await?;
            odm.update_by_id::<Account>(2, Account::balance().inc(30))
                .session(tx.session())
                .await?;
            Ok(())
        })
        .await
    };
    let proxy = odm::testing::FaultProxy::start().await?;
    proxy.lose_replies("commitTransaction", 2);
    let odm = proxy.odm(db.name()).await?.with_catalog(common::catalog());
    transfer(&odm).await?;
    assert_eq!(proxy.count_of("commitTransaction"), 3);
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 70), (2, 30)]);

    // No time to commit again: the driver's own retry is lost too, and the error says so.
    let proxy = odm::testing::FaultProxy::start().await?;
    proxy.lose_replies("commitTransaction", 2);
    let odm = proxy
        .odm(db.name())
        .await?
        .with_retry_deadline(Duration::ZERO);
    let err = transfer(&odm).await.unwrap_err();
    assert!(
        err.has_label(odm::mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT),
        "{err:?}"
    );
    assert_eq!(proxy.count_of("commitTransaction"), 2);
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 40), (2, 60)]);
    Ok(())
}

/// The server stops answering in the middle of a transfer's transaction (after its first
/// update has been sent). The transaction ends with an error in about the driver's monitor
/// timeout, whatever the retry deadline: the attempt that met the pause is not retried into a
/// server that cannot be selected. The held update reaches the server when it resumes, inside a
/// transaction that is never committed: nothing of the transfer lands. That transaction still
/// holds the first account, which its first update wrote: the next transaction of the handle
/// sends one `killSessions` of it alongside (before, every attempt of the transfer run again
/// met a write conflict until the server's transaction lifetime limit, 60 s), and the transfer
/// moves the money once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_held_by_a_paused_server_lands_nothing_and_runs_again_once() -> odm::Result<()> {
    let db = common::db().await?;
    two_accounts(&db).await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let uri = format!("{}&{}", proxy.uri(), common::GIVE_UP_SOON);
    let odm = odm::Odm::connect(&uri, db.name())
        .await?
        .with_catalog(common::catalog())
        .with_retry_deadline(Duration::from_secs(20));
    let transfer = async |odm: &odm::Odm, pause: Option<&odm::testing::FaultProxy>| {
        odm.transaction(async |tx| {
            odm.update_by_id::<Account>(1, Account::balance().inc(-30))
                .session(tx.session())
                .await?;
            if let Some(proxy) = pause {
                proxy.pause();
            }
            odm.update_by_id::<Account>(2, Account::balance().inc(30))
                .session(tx.session())
                .await?;
            Ok(())
        })
        .await
    };
    let start = std::time::Instant::now();
    let err = transfer(&odm, Some(&proxy)).await.unwrap_err();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}: {err}");
    assert!(
        err.is_outcome_unknown() || err.driver_error().is_some(),
        "{err:?}"
    );
    proxy.resume();
    // Time for the held update to reach the server: it changes nothing.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 100), (2, 0)]);

    // The same handle, the same transfer: once, without waiting for the server to time the
    // cut-off transaction out.
    let start = std::time::Instant::now();
    transfer(&odm, None).await?;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 70), (2, 30)]);
    assert_eq!(proxy.count_of("killSessions"), 1);
    // Nothing is left to end: the next transaction sends none.
    transfer(&odm, None).await?;
    assert_eq!(proxy.count_of("killSessions"), 1);
    assert_eq!(balances(&stored(&db, "accounts").await), [(1, 40), (2, 60)]);
    Ok(())
}
