//! Two-way references (seed 000/001's people and tasks): one call moves a task to another
//! person and updates both sides; interrupted moves are found and repaired.

#[path = "common/catalog.rs"]
mod catalog;
mod common;

use catalog::*;
use common::{sent, stored_one};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::relations::InverseIssue;
use odm::testing::TestDb;
use odm::TransactionMode;

struct Team {
    kate: Person,
    bob: Person,
    task: Task,
}

async fn team(db: &TestDb) -> odm::Result<Team> {
    let kate_id = ObjectId::new();
    let task = Task {
        id: ObjectId::new(),
        description: "Write lesson plan".into(),
        due_date: DateTime::parse_rfc3339_str("2014-04-01T00:00:00Z").unwrap(),
        owner: Ref::new(kate_id),
    };
    let kate = Person {
        id: kate_id,
        name: "Kate Monster".into(),
        tasks: vec![Ref::new(task.id)],
    };
    let bob = Person {
        id: ObjectId::new(),
        name: "Bob".into(),
        tasks: vec![],
    };
    db.odm().insert_many(&[kate.clone(), bob.clone()]).await?;
    db.odm().insert_one(&task).await?;
    db.commands().clear();
    Ok(Team { kate, bob, task })
}

async fn listed_tasks(db: &TestDb, person: ObjectId) -> Vec<Bson> {
    stored_one(db, "people", person)
        .await
        .unwrap()
        .get_array("tasks")
        .unwrap()
        .clone()
}

async fn owner_of(db: &TestDb, task: ObjectId) -> ObjectId {
    stored_one(db, "tasks", task)
        .await
        .unwrap()
        .get_object_id("owner")
        .unwrap()
}

#[tokio::test]
async fn reassigning_in_a_transaction_updates_both_sides() -> odm::Result<()> {
    let db = common::db().await?;
    let t = team(&db).await?;
    assert!(
        db.odm().supports_transactions().await?,
        "the dev server is a replica set"
    );
    db.commands().clear();

    let moved = db
        .odm()
        .reassign(Task::owner(), t.task.id, t.bob.id)
        .await?;
    assert!(moved.changed && moved.in_transaction);
    assert_eq!(moved.previous, Some(t.kate.id));
    assert_eq!(
        sent(&db),
        ["findAndModify", "update", "update", "commitTransaction"]
    );

    assert_eq!(owner_of(&db, t.task.id).await, t.bob.id);
    assert!(listed_tasks(&db, t.kate.id).await.is_empty());
    assert_eq!(
        listed_tasks(&db, t.bob.id).await,
        [Bson::ObjectId(t.task.id)]
    );
    assert!(db
        .odm()
        .verify_inverse(Task::owner())
        .await?
        .is_consistent());

    let again = db
        .odm()
        .reassign(Task::owner(), t.task.id, t.bob.id)
        .await?;
    assert!(!again.changed, "already there");
    Ok(())
}

#[tokio::test]
async fn without_a_transaction_the_order_is_fixed() -> odm::Result<()> {
    let db = common::db().await?;
    let t = team(&db).await?;
    let moved = db
        .odm()
        .reassign(Task::owner(), t.task.id, t.bob.id)
        .transaction(TransactionMode::Never)
        .await?;
    assert!(moved.changed && !moved.in_transaction);
    assert_eq!(
        sent(&db),
        ["update", "findAndModify", "update", "update", "find"],
        "add, set, pull, add again, confirm"
    );
    assert_eq!(owner_of(&db, t.task.id).await, t.bob.id);
    assert!(listed_tasks(&db, t.kate.id).await.is_empty());
    assert_eq!(
        listed_tasks(&db, t.bob.id).await,
        [Bson::ObjectId(t.task.id)]
    );
    Ok(())
}

#[tokio::test]
async fn an_interrupted_transaction_changes_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    let t = team(&db).await?;
    let err = db
        .odm()
        .reassign(Task::owner(), t.task.id, t.bob.id)
        .fail_after_writes(2)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("injected fault"), "{err}");
    assert_eq!(owner_of(&db, t.task.id).await, t.kate.id);
    assert_eq!(
        listed_tasks(&db, t.kate.id).await,
        [Bson::ObjectId(t.task.id)]
    );
    assert!(listed_tasks(&db, t.bob.id).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn interrupted_moves_without_a_transaction_are_found_and_repaired() -> odm::Result<()> {
    for writes in [1, 2] {
        let db = common::db().await?;
        let t = team(&db).await?;
        let err = db
            .odm()
            .reassign(Task::owner(), t.task.id, t.bob.id)
            .transaction(TransactionMode::Never)
            .fail_after_writes(writes)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("injected fault"), "{err}");

        // Half done: the task is listed by both people. The task's own owner is the truth.
        let owner = owner_of(&db, t.task.id).await;
        assert_eq!(owner, if writes == 1 { t.kate.id } else { t.bob.id });
        assert_eq!(listed_tasks(&db, t.kate.id).await.len(), 1);
        assert_eq!(listed_tasks(&db, t.bob.id).await.len(), 1);

        let report = db.odm().verify_inverse(Task::owner()).await?;
        let wrong_parent = if writes == 1 { t.bob.id } else { t.kate.id };
        assert_eq!(
            report.issues,
            [InverseIssue::ExtraInParent {
                parent: Bson::ObjectId(wrong_parent),
                child: Bson::ObjectId(t.task.id)
            }]
        );
        assert_eq!(report.parents_repaired, 0, "verify alone writes nothing");
        assert_eq!(listed_tasks(&db, wrong_parent).await.len(), 1);

        let repaired = db.odm().verify_inverse(Task::owner()).repair(true).await?;
        assert_eq!(repaired.parents_repaired, 1);
        assert!(listed_tasks(&db, wrong_parent).await.is_empty());
        assert_eq!(listed_tasks(&db, owner).await, [Bson::ObjectId(t.task.id)]);
        assert!(db
            .odm()
            .verify_inverse(Task::owner())
            .await?
            .is_consistent());
    }
    Ok(())
}

#[tokio::test]
async fn a_task_missing_from_its_owners_list_is_added_back() -> odm::Result<()> {
    let db = common::db().await?;
    let t = team(&db).await?;
    db.raw()
        .collection::<Document>("people")
        .update_one(doc! {"_id": t.kate.id}, doc! {"$set": {"tasks": []}})
        .await?;
    let report = db
        .odm()
        .verify_inverse(Task::owner())
        .repair(true)
        .batch_size(1)
        .await?;
    assert_eq!(
        report.issues,
        [InverseIssue::MissingFromParent {
            parent: Bson::ObjectId(t.kate.id),
            child: Bson::ObjectId(t.task.id)
        }]
    );
    assert_eq!(report.parents_checked, 2);
    assert_eq!(
        listed_tasks(&db, t.kate.id).await,
        [Bson::ObjectId(t.task.id)]
    );
    Ok(())
}

#[tokio::test]
async fn reassigning_to_a_missing_person_changes_nothing() -> odm::Result<()> {
    for mode in [TransactionMode::Auto, TransactionMode::Never] {
        let db = common::db().await?;
        let t = team(&db).await?;
        let err = db
            .odm()
            .reassign(Task::owner(), t.task.id, ObjectId::new())
            .transaction(mode)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, odm::Error::NotFound { collection, .. } if collection == "people"),
            "{err}"
        );
        assert_eq!(owner_of(&db, t.task.id).await, t.kate.id);
        assert_eq!(
            listed_tasks(&db, t.kate.id).await,
            [Bson::ObjectId(t.task.id)]
        );
        assert!(db
            .odm()
            .verify_inverse(Task::owner())
            .await?
            .is_consistent());
    }
    Ok(())
}

#[tokio::test]
async fn a_reassignment_can_join_the_callers_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    let t = team(&db).await?;
    let mut session = db.odm().start_session().await?;
    session.start_transaction().await?;
    db.odm()
        .reassign(Task::owner(), t.task.id, t.bob.id)
        .session(&mut session)
        .await?;
    session.abort_transaction().await?;
    assert_eq!(
        owner_of(&db, t.task.id).await,
        t.kate.id,
        "rolled back with the caller's transaction"
    );
    assert!(listed_tasks(&db, t.bob.id).await.is_empty());
    Ok(())
}

/// One side of the pair declares the inverse; the other (the child) does not.
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

#[tokio::test]
async fn a_full_parent_refuses_the_reassignment_and_nothing_changes() -> odm::Result<()> {
    for mode in [TransactionMode::Auto, TransactionMode::Never] {
        let db = common::db().await?;
        let full = Crew {
            id: 1,
            members: vec![Ref::new(1), Ref::new(2)],
        };
        let other = Crew {
            id: 2,
            members: vec![Ref::new(3)],
        };
        db.odm().insert_many(&[full, other]).await?;
        let sailors = [1, 2, 3].map(|id| Sailor {
            id,
            crew: Ref::new(if id < 3 { 1 } else { 2 }),
        });
        db.odm().insert_many(&sailors).await?;

        let err = db
            .odm()
            .reassign(Sailor::crew(), 3, 1)
            .transaction(mode)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, odm::Error::BoundExceeded { collection, max: 2, .. } if collection == "crews"),
            "{err}"
        );
        assert_eq!(
            stored_one(&db, "sailors", 3)
                .await
                .unwrap()
                .get_i32("crew")
                .unwrap(),
            2
        );
        assert_eq!(
            stored_one(&db, "crews", 1)
                .await
                .unwrap()
                .get_array("members")
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            stored_one(&db, "crews", 2)
                .await
                .unwrap()
                .get_array("members")
                .unwrap()
                .len(),
            1
        );

        // The inverse was found through the crew's declaration.
        let moved = db
            .odm()
            .reassign(Sailor::crew(), 1, 2)
            .transaction(mode)
            .await?;
        assert!(moved.changed);
        assert!(db
            .odm()
            .verify_inverse(Sailor::crew())
            .await?
            .is_consistent());
    }
    Ok(())
}
