//! The ODM's own writes of a two-way child (seed 000's tasks, naming their owner) keep the
//! parent's list: inserts one by one, in batches across parents and concurrently into one
//! parent, replacements that move or create a child; a full parent refuses with nothing
//! written; an update of the reference is refused. With transactions and, on a standalone
//! server, in the fixed order, after which `verify_inverse` has nothing to repair.

#[path = "common/catalog.rs"]
mod catalog;
mod common;

use catalog::*;
use common::{sent, stored, stored_one};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::monitor::CommandLog;
use odm::prelude::*;
use odm::Odm;
use std::future::IntoFuture;

fn person(name: &str) -> Person {
    Person {
        id: ObjectId::new(),
        name: name.into(),
        tasks: vec![],
    }
}

fn task(owner: &Person, n: usize) -> Task {
    Task {
        id: ObjectId::new(),
        description: format!("task {n}"),
        due_date: DateTime::from_millis(0),
        owner: Ref::new(owner.id),
    }
}

/// The ids the stored parent lists in `array`, read back raw.
async fn listed(db: &odm::mongodb::Database, collection: &str, array: &str, id: Bson) -> Vec<Bson> {
    db.collection::<Document>(collection)
        .find_one(doc! { "_id": id })
        .await
        .expect("raw find_one")
        .expect("the parent")
        .get_array(array)
        .cloned()
        .unwrap_or_default()
}

/// Every stored task is listed by the person it names, and by no other: read back raw.
async fn every_task_listed(db: &odm::mongodb::Database) -> usize {
    let tasks = common::stored_in(db, "tasks").await;
    let people = common::stored_in(db, "people").await;
    for t in &tasks {
        let id = t.get("_id").unwrap();
        let owner = t.get("owner").unwrap();
        for p in &people {
            let lists = p.get_array("tasks").unwrap().contains(id);
            assert_eq!(lists, p.get("_id") == Some(owner), "{t} / {p}");
        }
    }
    tasks.len()
}

#[tokio::test]
async fn inserts_list_every_task_on_its_owner() -> odm::Result<()> {
    let db = common::db().await?;
    let people: Vec<Person> = ["Kate", "Bob", "Ann", "Sam"].map(person).into();
    db.odm().insert_many(&people).await?;
    db.commands().clear();

    // One by one: one `update` of the owner and the `insert`, in one transaction.
    for n in 0..100 {
        db.odm().insert_one(&task(&people[n % 4], n)).await?;
        let expected = match n {
            0 => vec!["hello", "update", "insert", "commitTransaction"],
            _ => vec!["update", "insert", "commitTransaction"],
        };
        assert_eq!(sent(&db), expected, "insert {n}");
    }
    // In one batch across the four owners: one `update` per owner, one `insert`.
    let batch: Vec<Task> = (0..160).map(|n| task(&people[n % 4], n)).collect();
    db.odm().insert_many(&batch).await?;
    assert_eq!(
        sent(&db),
        [
            "update",
            "update",
            "update",
            "update",
            "insert",
            "commitTransaction"
        ]
    );

    assert_eq!(every_task_listed(db.raw()).await, 260);
    for p in &people {
        assert_eq!(
            listed(db.raw(), "people", "tasks", p.id.into()).await.len(),
            65
        );
    }
    let report = db.odm().verify_inverse(Task::owner()).await?;
    assert!(report.is_consistent(), "{report}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_for_one_owner_are_all_listed() -> odm::Result<()> {
    let db = common::db().await?;
    let kate = person("Kate");
    db.odm().insert_one(&kate).await?;
    let tasks: Vec<Task> = (0..40).map(|n| task(&kate, n)).collect();
    let inserts = tasks.iter().map(|t| db.odm().insert_one(t).into_future());
    for inserted in futures_util::future::join_all(inserts).await {
        inserted?;
    }
    let listed = listed(db.raw(), "people", "tasks", kate.id.into()).await;
    assert_eq!(listed.len(), 40);
    for t in &tasks {
        assert!(listed.contains(&Bson::ObjectId(t.id)));
    }
    assert!(db
        .odm()
        .verify_inverse(Task::owner())
        .await?
        .is_consistent());
    Ok(())
}

#[tokio::test]
async fn a_replacement_that_moves_the_task_moves_it_on_both_lists() -> odm::Result<()> {
    let db = common::db().await?;
    let (kate, bob) = (person("Kate"), person("Bob"));
    db.odm().insert_many(&[kate.clone(), bob.clone()]).await?;
    let mut t = task(&kate, 1);
    db.odm().insert_one(&t).await?;
    db.commands().clear();

    // Kept owner: the read of the reference, then the replacement.
    t.description = "renamed".into();
    db.odm().replace_one(&t).await?;
    assert_eq!(sent(&db), ["find", "update"]);

    // New owner: read, then in a transaction: read again, add, replace, pull.
    t.owner = Ref::new(bob.id);
    db.odm().replace_one(&t).await?;
    assert_eq!(
        sent(&db),
        [
            "find",
            "find",
            "update",
            "update",
            "update",
            "commitTransaction"
        ]
    );
    assert!(listed(db.raw(), "people", "tasks", kate.id.into())
        .await
        .is_empty());
    assert_eq!(
        listed(db.raw(), "people", "tasks", bob.id.into()).await,
        [Bson::ObjectId(t.id)]
    );

    // An upsert creating a task lists it.
    let new = task(&kate, 2);
    db.odm().replace_one(&new).upsert(true).await?;
    assert_eq!(
        sent(&db),
        ["find", "find", "update", "update", "commitTransaction"]
    );
    assert_eq!(
        listed(db.raw(), "people", "tasks", kate.id.into()).await,
        [Bson::ObjectId(new.id)]
    );
    assert_eq!(every_task_listed(db.raw()).await, 2);
    assert!(db
        .odm()
        .verify_inverse(Task::owner())
        .await?
        .is_consistent());
    Ok(())
}

#[tokio::test]
async fn an_update_of_the_owner_is_refused_with_nothing_written() -> odm::Result<()> {
    let db = common::db().await?;
    let (kate, bob) = (person("Kate"), person("Bob"));
    db.odm().insert_many(&[kate.clone(), bob.clone()]).await?;
    let t = task(&kate, 1);
    db.odm().insert_one(&t).await?;
    db.commands().clear();

    let set = db
        .odm()
        .update_by_id::<Task>(t.id, Update::raw(doc! { "$set": { "owner": bob.id } }))
        .await
        .unwrap_err();
    assert!(
        matches!(&set, odm::Error::TwoWayWrite { collection, path, array } if collection == "tasks" && path == "owner" && array == "tasks"),
        "{set}"
    );
    assert!(set.to_string().contains("reassign"), "{set}");
    // An upsert naming the owner in its filter would insert a task no list holds.
    let upsert = db
        .odm()
        .update_one(
            Filter::<Task>::raw(doc! { "owner": bob.id, "description": "new" }),
            Update::raw(doc! { "$set": { "due_date": DateTime::from_millis(0) } }),
        )
        .upsert(true)
        .await
        .unwrap_err();
    assert!(matches!(upsert, odm::Error::TwoWayWrite { .. }), "{upsert}");
    assert!(sent(&db).is_empty(), "refused before anything is sent");
    assert_eq!(
        stored_one(&db, "tasks", t.id)
            .await
            .unwrap()
            .get_object_id("owner")
            .unwrap(),
        kate.id
    );
    assert_eq!(stored(&db, "tasks").await.len(), 1);

    // Other fields update as before.
    db.odm()
        .update_by_id::<Task>(t.id, Task::description().set("renamed".to_owned()))
        .await?;
    assert_eq!(sent(&db), ["update"]);
    Ok(())
}

/// A crew of at most two sailors, the inverse declared on the crew's side only.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "crews")]
struct Crew {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 2, inverse = "crew", on_delete = "pull")]
    members: Vec<Ref<Sailor>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "sailors")]
struct Sailor {
    #[serde(rename = "_id")]
    id: i32,
    #[parent]
    crew: Ref<Crew>,
}

fn sailor(id: i32, crew: i32) -> Sailor {
    Sailor {
        id,
        crew: Ref::new(crew),
    }
}

/// Crew 1 holds sailor 1 (one place left), crew 2 holds nobody.
async fn crews(odm: &Odm) -> odm::Result<()> {
    let crews = [
        Crew {
            id: 1,
            members: vec![],
        },
        Crew {
            id: 2,
            members: vec![],
        },
    ];
    odm.insert_many(&crews).await?;
    odm.insert_one(&sailor(1, 1)).await?;
    Ok(())
}

/// What is stored after a refusal: sailor 1 alone, listed by crew 1; crew 2 empty.
async fn nothing_written(db: &odm::mongodb::Database) {
    let sailors = common::stored_in(db, "sailors").await;
    assert_eq!(sailors, [doc! { "_id": 1, "crew": 1 }]);
    assert_eq!(
        listed(db, "crews", "members", 1.into()).await,
        [Bson::Int32(1)]
    );
    assert!(listed(db, "crews", "members", 2.into()).await.is_empty());
}

/// An insert into a full crew, alone or in a batch, fails with nothing written.
async fn full_crews_refuse(odm: &Odm, db: &odm::mongodb::Database) -> odm::Result<()> {
    crews(odm).await?;
    odm.insert_one(&sailor(2, 1)).await?;
    let one = odm.insert_one(&sailor(3, 1)).await.unwrap_err();
    assert!(
        matches!(&one, odm::Error::BoundExceeded { collection, max: 2, .. } if collection == "crews"),
        "{one}"
    );
    // Back to one sailor in crew 1.
    odm.delete_one(Sailor::id_field().eq(2)).await?;
    nothing_written(db).await;
    // Crew 2 takes two; crew 1 has room for one of the two it is given.
    let batch = [sailor(4, 2), sailor(5, 2), sailor(6, 1), sailor(7, 1)];
    let many = odm.insert_many(&batch).await.unwrap_err();
    assert!(matches!(&many, odm::Error::BoundExceeded { .. }), "{many}");
    nothing_written(db).await;
    // A missing crew refuses too.
    let missing = odm.insert_one(&sailor(8, 9)).await.unwrap_err();
    assert!(
        matches!(&missing, odm::Error::NotFound { collection, .. } if collection == "crews"),
        "{missing}"
    );
    nothing_written(db).await;
    // What fits lands, listed.
    odm.insert_many(&[sailor(4, 2), sailor(5, 2), sailor(6, 1)])
        .await?;
    assert_eq!(listed(db, "crews", "members", 1.into()).await.len(), 2);
    assert_eq!(listed(db, "crews", "members", 2.into()).await.len(), 2);
    assert!(odm.verify_inverse(Sailor::crew()).await?.is_consistent());
    Ok(())
}

#[tokio::test]
async fn a_full_parent_refuses_the_insert_with_nothing_written() -> odm::Result<()> {
    let db = common::db().await?;
    full_crews_refuse(db.odm(), db.raw()).await
}

/// A handle on a standalone server (no transactions), logging its commands.
async fn standalone(server: &common::Standalone, name: &str) -> odm::Result<(Odm, CommandLog)> {
    let mut options = odm::mongodb::options::ClientOptions::parse(&server.uri).await?;
    let log = CommandLog::new();
    log.attach(&mut options);
    let client = odm::mongodb::Client::with_options(options)?;
    let odm = Odm::new(client.database(name)).with_catalog(common::catalog());
    assert!(!odm.supports_transactions().await?);
    log.clear();
    Ok((odm, log))
}

#[tokio::test]
async fn without_transactions_the_owner_is_written_first() -> odm::Result<()> {
    let server = common::Standalone::start();
    let (odm, log) = standalone(&server, "two_way_writes").await?;
    let (kate, bob) = (person("Kate"), person("Bob"));
    odm.insert_many(&[kate.clone(), bob.clone()]).await?;
    log.clear();

    let mut t = task(&kate, 0);
    odm.insert_one(&t).await?;
    assert_eq!(log.names(), ["update", "insert"], "the owner first");
    log.clear();
    let batch: Vec<Task> = (1..=20)
        .map(|n| task(if n % 2 == 0 { &kate } else { &bob }, n))
        .collect();
    odm.insert_many(&batch).await?;
    assert_eq!(log.names(), ["update", "update", "insert"]);
    log.clear();

    // A move: read, add to the new owner, replace, pull from the old, add again and confirm.
    t.owner = Ref::new(bob.id);
    odm.replace_one(&t).await?;
    assert_eq!(
        log.names(),
        ["find", "update", "update", "update", "update", "find"]
    );

    // A duplicate task fails its insert: the owner's list is put back as the tasks say.
    let copy = Task {
        owner: Ref::new(kate.id),
        ..t.clone()
    };
    assert!(odm.insert_one(&copy).await.is_err());

    assert_eq!(every_task_listed(odm.database()).await, 21);
    let report = odm.verify_inverse(Task::owner()).await?;
    assert!(report.is_consistent(), "{report}");
    odm.database().drop().await?;
    Ok(())
}

#[tokio::test]
async fn without_transactions_a_full_parent_refuses_with_nothing_written() -> odm::Result<()> {
    let server = common::Standalone::start();
    let (odm, _log) = standalone(&server, "two_way_full").await?;
    full_crews_refuse(&odm, odm.database()).await?;
    odm.database().drop().await?;
    Ok(())
}

#[tokio::test]
async fn without_transactions_concurrent_inserts_for_one_owner_are_all_listed() -> odm::Result<()> {
    let server = common::Standalone::start();
    let (odm, _log) = standalone(&server, "two_way_concurrent").await?;
    let kate = person("Kate");
    odm.insert_one(&kate).await?;
    let tasks: Vec<Task> = (0..40).map(|n| task(&kate, n)).collect();
    let inserts = tasks.iter().map(|t| odm.insert_one(t).into_future());
    for inserted in futures_util::future::join_all(inserts).await {
        inserted?;
    }
    assert_eq!(
        listed(odm.database(), "people", "tasks", kate.id.into())
            .await
            .len(),
        40
    );
    assert!(odm.verify_inverse(Task::owner()).await?.is_consistent());
    Ok(())
}
