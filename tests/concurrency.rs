//! Concurrent callers of the operations that run several writes: the ODM retries its own
//! transactions on write conflicts, gives up in about one server selection timeout on a
//! server that is gone and in about the monitor's timeout on one that stopped answering,
//! leaves retrying to the caller inside the caller's transaction, and keeps two-way references
//! consistent without a transaction.

#[path = "common/catalog.rs"]
mod catalog;
mod common;

use std::time::{Duration, Instant};

use catalog::*;
use common::stored;
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::TransactionMode;

/// A brand's name copied into its gadgets: the smallest model pair with a cascade.
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

/// A deterministic sequence of small numbers (no randomness in tests).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

fn person(name: &str) -> Person {
    Person {
        id: ObjectId::new(),
        name: name.into(),
        tasks: vec![],
    }
}

fn task(owner: ObjectId, n: usize) -> Task {
    Task {
        id: ObjectId::new(),
        description: format!("task {n}"),
        due_date: DateTime::from_millis(0),
        owner: Ref::new(owner),
    }
}

/// People and their tasks, each person listing the tasks it owns.
async fn people_with_tasks(
    db: &TestDb,
    people: usize,
    tasks: usize,
) -> odm::Result<(Vec<Person>, Vec<Task>)> {
    let mut people: Vec<Person> = (0..people).map(|i| person(&format!("p{i}"))).collect();
    let tasks: Vec<Task> = (0..tasks)
        .map(|i| task(people[i % people.len()].id, i))
        .collect();
    for t in &tasks {
        let owner = people.iter_mut().find(|p| p.id == *t.owner.id()).unwrap();
        owner.tasks.push(Ref::new(t.id));
    }
    db.odm().insert_many(&people).await?;
    db.odm().insert_many(&tasks).await?;
    db.commands().clear();
    Ok((people, tasks))
}

/// Every task is listed by exactly its owner, read back with the raw driver: the problems found,
/// as text (empty when consistent).
async fn inverse_problems(db: &TestDb) -> Vec<String> {
    let tasks = stored(db, "tasks").await;
    let people = stored(db, "people").await;
    let mut problems = Vec::new();
    for t in &tasks {
        let id = t.get("_id").unwrap();
        let owner = t.get("owner").unwrap();
        let listing: Vec<&Bson> = people
            .iter()
            .filter(|p| p.get_array("tasks").unwrap().contains(id))
            .map(|p| p.get("_id").unwrap())
            .collect();
        if listing != [owner] {
            problems.push(format!(
                "task {id} owned by {owner} is listed by {listing:?}"
            ));
        }
    }
    for p in &people {
        let n = p.get_array("tasks").unwrap().len();
        let distinct: std::collections::HashSet<String> = p
            .get_array("tasks")
            .unwrap()
            .iter()
            .map(|b| b.to_string())
            .collect();
        if distinct.len() != n {
            problems.push(format!(
                "person {} lists a task twice",
                p.get("_id").unwrap()
            ));
        }
    }
    problems
}

/// 200 concurrent reassignments of 50 tasks among 4 people: every one succeeds without the
/// caller retrying (the ODM retries its transaction on write conflicts), and every task ends
/// listed by exactly its owner.
#[tokio::test]
async fn concurrent_reassignments_all_succeed_and_stay_consistent() -> odm::Result<()> {
    let db = common::db().await?;
    let (people, tasks) = people_with_tasks(&db, 4, 50).await?;
    let mut rng = Lcg(7);
    let moves: Vec<_> = (0..200)
        .map(|_| {
            let t = tasks[rng.below(tasks.len())].id;
            let p = people[rng.below(people.len())].id;
            let odm = db.odm().clone();
            tokio::spawn(async move { odm.reassign(Task::owner(), t, p).await })
        })
        .collect();
    let mut failures = Vec::new();
    for m in futures_util::future::join_all(moves).await {
        if let Err(e) = m.expect("task panicked") {
            failures.push(e.to_string());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 200 reassignments failed, e.g. {:?}",
        failures.len(),
        failures.first()
    );
    assert_eq!(inverse_problems(&db).await, Vec::<String>::new());
    Ok(())
}

/// 40 concurrent deletes of parts listed by the same product (`on_delete = "pull"`) and
/// supplied by the same supplier: every delete succeeds, and no reference to a deleted part is
/// left.
#[tokio::test]
async fn concurrent_deletes_with_rules_all_succeed_and_leave_no_dangling_reference(
) -> odm::Result<()> {
    let db = common::db().await?;
    let supplier = Supplier {
        id: ObjectId::new(),
        name: "Acme".into(),
        country: "NL".into(),
    };
    db.odm().insert_one(&supplier).await?;
    let parts: Vec<Part> = (0..40)
        .map(|i| Part {
            id: ObjectId::new(),
            partno: format!("P-{i}"),
            name: format!("part {i}"),
            qty: 1,
            cost: 0.0,
            price: 0.0,
            supplier: Some(Ref::new(supplier.id)),
        })
        .collect();
    db.odm().insert_many(&parts).await?;
    let product = Product {
        id: ObjectId::new(),
        name: "Widget".into(),
        manufacturer: "Acme".into(),
        catalog_number: 1,
        parts: parts.iter().map(|p| Ref::new(p.id)).collect(),
    };
    db.odm().insert_one(&product).await?;

    let deletes: Vec<_> = parts
        .iter()
        .map(|p| {
            let odm = db.odm().clone();
            let id = p.id;
            tokio::spawn(async move { odm.delete_one(Part::id_field().eq(id)).await })
        })
        .collect();
    let mut failures = Vec::new();
    for d in futures_util::future::join_all(deletes).await {
        match d.expect("task panicked") {
            Ok(1) => {}
            Ok(n) => failures.push(format!("deleted {n}")),
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 40 deletes failed, e.g. {:?}",
        failures.len(),
        failures.first()
    );
    assert!(stored(&db, "parts").await.is_empty());
    let products = stored(&db, "products").await;
    assert_eq!(
        products[0].get_array("parts").unwrap(),
        &Vec::<Bson>::new(),
        "no dangling reference"
    );
    Ok(())
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Each operation that runs its own transaction, on a handle whose server is gone: a reassign
/// (in a transaction), a delete with rules and a cascading update (in a transaction). Each
/// must end in about one server selection timeout (1 s here), with an error that is not
/// transient.
async fn all_fail_fast(odm: &odm::Odm, may_be_cut: bool) {
    let start = Instant::now();
    let err = odm
        .reassign(Task::owner(), ObjectId::new(), ObjectId::new())
        .transaction(TransactionMode::Always)
        .await
        .unwrap_err();
    let reassign = (start.elapsed(), err);

    let start = Instant::now();
    let err = odm
        .delete_one(Person::id_field().eq(ObjectId::new()))
        .await
        .unwrap_err();
    let delete = (start.elapsed(), err);

    let start = Instant::now();
    let err = odm
        .update_by_id::<Brand>(1, Brand::name().set("Acme".to_owned()))
        .transaction(TransactionMode::Always)
        .await
        .unwrap_err();
    let cascade = (start.elapsed(), err);

    for (what, (elapsed, err)) in [
        ("reassign", reassign),
        ("delete", delete),
        ("cascade", cascade),
    ] {
        assert!(
            elapsed < Duration::from_secs(5),
            "{what} took {elapsed:?}: {err}"
        );
        // The operation that meets the cut connections first may end on that network error,
        // which a failover would make worth retrying; a server that cannot be selected never is.
        let network = err.driver_error().is_some_and(|e| {
            matches!(
                *e.kind,
                odm::mongodb::error::ErrorKind::Io(_)
                    | odm::mongodb::error::ErrorKind::ConnectionPoolCleared { .. }
            )
        });
        assert!(
            !err.is_transient() || (network && may_be_cut),
            "{what}: {err}"
        );
    }
}

#[tokio::test]
async fn a_server_never_reached_ends_each_operation_in_about_one_selection_timeout(
) -> odm::Result<()> {
    let uri = format!(
        "mongodb://127.0.0.1:{}/?serverSelectionTimeoutMS=1000",
        closed_port()
    );
    let odm = odm::Odm::connect(&uri, "gone")
        .await?
        .with_catalog(common::catalog());
    assert_eq!(odm.retry_deadline(), Duration::from_secs(1));
    all_fail_fast(&odm, false).await;
    Ok(())
}

/// The server dies while the handle is in use (it has learnt that the deployment runs
/// transactions, and has pooled connections): each operation still ends in about one server
/// selection timeout. (Before the retries had a deadline and left unreachable servers alone, a
/// cascade in a transaction took 50 attempts of two selection timeouts each.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_ends_each_operation_in_about_one_selection_timeout() -> odm::Result<()>
{
    let db = common::db().await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let uri = format!("{}&serverSelectionTimeoutMS=1000", proxy.uri());
    // A deadline far longer than the selection timeout: a server that cannot be selected is
    // not retried at all, whatever the deadline.
    let odm = odm::Odm::connect(&uri, db.name())
        .await?
        .with_catalog(common::catalog())
        .with_retry_deadline(Duration::from_secs(20));
    let (people, tasks) = people_with_tasks(&db, 2, 1).await?;
    odm.insert_one(&Brand {
        id: 1,
        name: "Acme".into(),
    })
    .await?;
    odm.reassign(Task::owner(), tasks[0].id, people[1].id)
        .await?;
    assert!(odm.supports_transactions().await?);

    proxy.cut();
    all_fail_fast(&odm, true).await;
    Ok(())
}

/// Inside the caller's transaction a write conflict is returned at once, classified as
/// transient, and nothing is retried: the ODM cannot run the caller's earlier work again.
#[tokio::test]
async fn a_write_conflict_in_the_callers_transaction_is_returned_not_retried() -> odm::Result<()> {
    let db = common::db().await?;
    let (people, tasks) = people_with_tasks(&db, 2, 1).await?;
    let (kate, bob, task) = (people[0].id, people[1].id, tasks[0].id);

    // Another transaction has written Kate and not committed yet.
    let mut other = db.raw().client().start_session().await?;
    other.start_transaction().await?;
    db.raw()
        .collection::<Document>("people")
        .update_one(doc! {"_id": kate}, doc! {"$set": {"name": "Kate M."}})
        .session(&mut other)
        .await?;

    let mut mine = db.odm().start_session().await?;
    mine.start_transaction().await?;
    db.commands().clear();
    let err = db
        .odm()
        .reassign(Task::owner(), task, bob)
        .session(&mut mine)
        .await
        .unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    assert!(err.is_write_conflict(), "{err:?}");
    assert!(err.has_label("TransientTransactionError"), "{err:?}");
    assert_eq!(
        common::sent(&db),
        ["findAndModify", "update"],
        "the pull from Kate conflicted, and nothing was sent again"
    );
    let _ = mine.abort_transaction().await;
    other.abort_transaction().await?;
    assert_eq!(inverse_problems(&db).await, Vec::<String>::new());
    Ok(())
}

/// Without a transaction (the fixed order), 100 rounds of four concurrent moves of the same
/// task among three people: after every round the task is listed by exactly its owner, with no
/// repair.
#[tokio::test]
async fn concurrent_moves_without_a_transaction_converge() -> odm::Result<()> {
    let db = common::db().await?;
    let (people, tasks) = people_with_tasks(&db, 3, 1).await?;
    let task = tasks[0].id;
    let mut rng = Lcg(11);
    let mut inconsistent = Vec::new();
    for round in 0..100 {
        let moves: Vec<_> = (0..4)
            .map(|_| {
                let to = people[rng.below(people.len())].id;
                let odm = db.odm().clone();
                tokio::spawn(async move {
                    odm.reassign(Task::owner(), task, to)
                        .transaction(TransactionMode::Never)
                        .await
                })
            })
            .collect();
        for m in futures_util::future::join_all(moves).await {
            m.expect("task panicked")?;
        }
        let problems = inverse_problems(&db).await;
        if !problems.is_empty() {
            inconsistent.push((round, problems));
            // The next round starts from a consistent state.
            db.odm().verify_inverse(Task::owner()).repair(true).await?;
        }
    }
    assert!(
        inconsistent.is_empty(),
        "{} of 100 rounds inconsistent, e.g. {:?}",
        inconsistent.len(),
        inconsistent.first()
    );
    Ok(())
}

/// A handle whose every copy `update` is followed, before the driver returns, by a rename of
/// brand 1 behind the ODM's back: a source that never stops changing.
async fn churning_handle(db: &TestDb) -> odm::Result<odm::Odm> {
    use odm::mongodb::event::command::CommandEvent;
    use odm::mongodb::event::EventHandler;
    use odm::mongodb::options::ClientOptions;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let uri = odm::testing::test_uri()?;
    let mut options = ClientOptions::parse(&uri).await?;
    let db_name = db.name().to_owned();
    let renames = std::sync::Arc::new(AtomicUsize::new(0));
    options.command_event_handler = Some(EventHandler::callback(move |ev: CommandEvent| {
        let CommandEvent::Succeeded(done) = ev else {
            return;
        };
        if done.command_name != "update" {
            return;
        }
        let n = renames.fetch_add(1, Ordering::SeqCst);
        let (uri, db_name) = (uri.clone(), db_name.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let client = odm::mongodb::Client::with_uri_str(&uri).await.unwrap();
                client
                    .database(&db_name)
                    .collection::<Document>("brands")
                    .update_one(
                        doc! {"_id": 1},
                        doc! {"$set": {"name": format!("Acme {n}")}},
                    )
                    .await
                    .unwrap();
            });
        })
        .join()
        .unwrap();
    }));
    let client = odm::mongodb::Client::with_options(options)?;
    Ok(odm::Odm::new(client.database(db.name())).with_catalog(common::catalog()))
}

/// A cascade without a transaction whose source keeps changing gives up after 50 rounds (or at
/// the retry deadline) with an error naming the source, the ids and the copies that may be
/// stale, never with `Ok`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cascade_that_cannot_catch_up_is_an_error_naming_what_may_be_stale() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .insert_one(&Brand {
            id: 1,
            name: "Acme".into(),
        })
        .await?;
    db.odm()
        .insert_one(&Gadget {
            id: 1,
            brand: Some(Ref::new(1)),
            brand_name: String::new(),
        })
        .await?;
    let churning = churning_handle(&db).await?;

    for (deadline, expected_rounds) in [(Duration::from_secs(20), 50), (Duration::ZERO, 1)] {
        let err = churning
            .clone()
            .with_retry_deadline(deadline)
            .update_by_id::<Brand>(1, Brand::name().set("Acme".to_owned()))
            .await
            .unwrap_err();
        match &err {
            odm::Error::CascadeIncomplete {
                collection,
                ids,
                paths,
                rounds,
            } => {
                assert_eq!(collection, "brands");
                assert_eq!(ids, &["{ _id: 1 }"]);
                assert_eq!(paths, &["gadgets.brand_name"]);
                assert_eq!(*rounds, expected_rounds, "{err}");
            }
            other => panic!("{other}"),
        }
    }
    Ok(())
}

/// The server stops answering in the middle of a cascading update (its process is stopped, or
/// the network hangs): the update ends with an error in about the driver's monitor timeout
/// (`connectTimeoutMS`, here 1 s), not never, and says its outcome is unknown. The update was
/// held on its way, not lost: once the server resumes it lands, the cascade that never started
/// leaves the copy stale, the copies' verification finds it, and running the same update again
/// (a `$set` is idempotent) brings the copy in line. The handle is usable again without being
/// rebuilt. In a transaction, the held update is never committed: source and copy stay as
/// they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_server_ends_the_operation_and_the_held_write_is_reconciled() -> odm::Result<()> {
    let db = common::db().await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let uri = format!("{}&{}", proxy.uri(), common::GIVE_UP_SOON);
    let odm = odm::Odm::connect(&uri, db.name())
        .await?
        .with_catalog(common::catalog());
    odm.insert_one(&Brand {
        id: 1,
        name: "Acme".into(),
    })
    .await?;
    odm.insert_one(&Gadget {
        id: 1,
        brand: Some(Ref::new(1)),
        brand_name: String::new(),
    })
    .await?;
    let stored_names = || async {
        let brand = common::stored_one(&db, "brands", 1)
            .await
            .unwrap_or_default();
        let gadget = common::stored_one(&db, "gadgets", 1)
            .await
            .unwrap_or_default();
        (
            brand.get_str("name").unwrap_or_default().to_owned(),
            gadget.get_str("brand_name").unwrap_or_default().to_owned(),
        )
    };
    assert_eq!(stored_names().await, ("Acme".into(), "Acme".into()));

    // Without a transaction (the default): the source update is held by the paused server.
    proxy.pause();
    let start = Instant::now();
    let err = odm
        .update_by_id::<Brand>(1, Brand::name().set("Acme Corp".to_owned()))
        .await
        .unwrap_err();
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}: {err}");
    assert!(err.is_outcome_unknown(), "{err:?}");
    assert!(!err.is_transient(), "{err:?}");
    // A read meanwhile ends in about one selection timeout.
    let start = Instant::now();
    let read = odm.get::<Brand>(1).await;
    assert!(read.is_err(), "{read:?}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );

    proxy.resume();
    // The held update lands once the server answers again; the cascade never ran.
    let deadline = Instant::now() + Duration::from_secs(10);
    while stored_names().await.0 != "Acme Corp" && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(stored_names().await, ("Acme Corp".into(), "Acme".into()));
    let report = odm.verify_copies().await?;
    assert!(
        !report.is_consistent(),
        "the stale copy is found: {report:?}"
    );
    // The same update again, through the same handle: the copy follows.
    odm.update_by_id::<Brand>(1, Brand::name().set("Acme Corp".to_owned()))
        .await?;
    assert_eq!(
        stored_names().await,
        ("Acme Corp".into(), "Acme Corp".into())
    );
    assert!(odm.verify_copies().await?.is_consistent());

    // In a transaction: the held update is part of a transaction that is never committed.
    if odm.supports_transactions().await? {
        proxy.pause();
        let err = odm
            .update_by_id::<Brand>(1, Brand::name().set("Acme Ltd".to_owned()))
            .transaction(TransactionMode::Always)
            .await
            .unwrap_err();
        assert!(err.is_outcome_unknown(), "{err:?}");
        proxy.resume();
        // Give the held update time to reach the server: it changes nothing visible.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            stored_names().await,
            ("Acme Corp".into(), "Acme Corp".into())
        );
        assert!(odm.verify_copies().await?.is_consistent());
    }
    Ok(())
}

/// A move without a transaction, stopped by a server that stops answering right after each of
/// its first three commands (the server ran it; its reply never comes): the move ends in about
/// the monitor's timeout with an error whose outcome is unknown. Whatever the step, no task is
/// missing from its owner's list and the task names one owner; at most one person lists it too
/// many (after step 3 none does), and `verify_inverse` repairs that, as the fixed order
/// promises.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_stopped_after_each_step_is_repaired_by_verify_inverse() -> odm::Result<()> {
    // The n-th command of that name, in the order the move sends them.
    let steps = [("update", 1), ("findAndModify", 1), ("update", 2)];
    for (step, (command, nth)) in steps.into_iter().enumerate() {
        let db = common::db().await?;
        let (people, tasks) = people_with_tasks(&db, 2, 1).await?;
        let (kate, bob, task) = (people[0].id, people[1].id, tasks[0].id);
        let proxy = odm::testing::FaultProxy::start().await?;
        let uri = format!("{}&{}", proxy.uri(), common::GIVE_UP_SOON);
        let odm = odm::Odm::connect(&uri, db.name())
            .await?
            .with_catalog(common::catalog());
        odm.get::<Task>(task).await?; // connected

        proxy.pause_after(command, nth);
        let start = Instant::now();
        let err = odm
            .reassign(Task::owner(), task, bob)
            .transaction(TransactionMode::Never)
            .await
            .unwrap_err();
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "step {}",
            step + 1
        );
        assert!(err.is_outcome_unknown(), "step {}: {err:?}", step + 1);
        proxy.resume();
        tokio::time::sleep(Duration::from_millis(300)).await;

        let stored_task = common::stored_one(&db, "tasks", task).await.unwrap();
        let owner = stored_task.get_object_id("owner").unwrap();
        let expected_owner = if step == 0 { kate } else { bob };
        assert_eq!(owner, expected_owner, "step {}", step + 1);
        let listing: Vec<ObjectId> = stored(&db, "people")
            .await
            .iter()
            .filter(|p| {
                p.get_array("tasks")
                    .unwrap()
                    .contains(&Bson::ObjectId(task))
            })
            .map(|p| p.get_object_id("_id").unwrap())
            .collect();
        assert!(listing.contains(&owner), "step {}: {listing:?}", step + 1);
        let extra = if step == 2 { 1 } else { 2 };
        assert_eq!(listing.len(), extra, "step {}: {listing:?}", step + 1);

        db.odm().verify_inverse(Task::owner()).repair(true).await?;
        assert_eq!(
            inverse_problems(&db).await,
            Vec::<String>::new(),
            "step {}",
            step + 1
        );
    }
    Ok(())
}
