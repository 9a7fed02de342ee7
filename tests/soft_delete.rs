//! Soft deletes (`#[odm(soft_delete)]`): a delete marks the document with the server's time
//! instead of removing it, and every query of the model skips the marked documents. What
//! landed is read back with the raw driver; commands are counted.

mod common;

use common::{last_command, sent, stored, stored_one};
use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;

// ANCHOR: model
/// A person's task (the seed's people and tasks): deleting it keeps it, marked, for the
/// history of the project.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "tasks", soft_delete)]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    description: String,
    owner: String,
    /// `None` until the task is deleted; then the time of the delete.
    deleted_at: Option<odm::bson::DateTime>,
}
// ANCHOR_END: model

/// The same kind of task with the field named otherwise.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "chores", soft_delete = "removed_at")]
struct Chore {
    #[serde(rename = "_id")]
    id: i32,
    description: String,
    #[serde(rename = "removedAt")]
    removed_at: Option<odm::bson::DateTime>,
}

fn task(id: i32, description: &str, owner: &str) -> Task {
    Task {
        id,
        description: description.to_owned(),
        owner: owner.to_owned(),
        deleted_at: None,
    }
}

async fn three_tasks(db: &odm::testing::TestDb) -> odm::Result<()> {
    db.odm()
        .insert_many(&[
            task(1, "Write the summary", "kate"),
            task(2, "Review the budget", "kate"),
            task(3, "Book the room", "tom"),
        ])
        .await?;
    db.commands().clear();
    Ok(())
}

#[tokio::test]
async fn a_delete_marks_the_document_and_every_query_skips_it() -> odm::Result<()> {
    let db = common::db().await?;
    three_tasks(&db).await?;
    let odm = db.odm();

    // ANCHOR: delete
    let deleted = odm.delete_one(Task::id_field().eq(1)).await?;
    assert_eq!(deleted, 1);
    // Still stored, marked with the time of the delete...
    let kept = stored_one(&db, "tasks", 1).await.expect("kept");
    assert!(matches!(kept.get("deleted_at"), Some(Bson::DateTime(_))));
    // ...and gone from the model's queries.
    assert_eq!(odm.get::<Task>(1).await?, None);
    assert_eq!(odm.count(Task::owner().eq("kate")).await?, 1);
    // ANCHOR_END: delete
    let update = last_command(&db, "update");
    let statement = &update.get_array("updates").unwrap()[0];
    let statement = statement.as_document().unwrap();
    assert_eq!(
        statement.get_document("u").unwrap(),
        &doc! { "$currentDate": { "deleted_at": { "$type": "date" } } }
    );
    assert_eq!(
        statement.get_document("q").unwrap(),
        &doc! { "_id": 1, "deleted_at": null }
    );
    assert!(!statement.get_bool("multi").unwrap_or(false));

    let found: Vec<i32> = odm
        .find(Task::owner().eq("kate"))
        .await?
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(found, [2]);
    let all: Vec<i32> = odm
        .find(Filter::<Task>::all())
        .stream()
        .map_ok(|t| t.id)
        .try_collect()
        .await?;
    assert_eq!(all, [2, 3]);
    Ok(())
}

#[tokio::test]
async fn a_delete_is_one_update_in_place_of_the_delete() -> odm::Result<()> {
    let db = common::db().await?;
    three_tasks(&db).await?;
    db.odm().delete_one(Task::id_field().eq(2)).await?;
    assert_eq!(sent(&db), ["update"]);
    db.odm().delete_many(Task::owner().eq("kate")).await?;
    let log = db.commands().take();
    let names: Vec<&str> = log.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["update"]);
    let update = log[0].command.clone().expect("logged with documents");
    let statement = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(statement.get_bool("multi").ok(), Some(true));
    // A loaded document's delete is the same command.
    let three = db.odm().get::<Task>(3).await?.expect("live");
    db.commands().clear();
    assert_eq!(db.odm().delete_document(&three).await?, 1);
    assert_eq!(sent(&db), ["update"]);
    Ok(())
}

#[tokio::test]
async fn deleting_again_marks_nothing_and_keeps_the_first_time() -> odm::Result<()> {
    let db = common::db().await?;
    three_tasks(&db).await?;
    db.odm().delete_one(Task::id_field().eq(1)).await?;
    let first = stored_one(&db, "tasks", 1).await.expect("kept");
    assert_eq!(db.odm().delete_one(Task::id_field().eq(1)).await?, 0);
    assert_eq!(db.odm().delete_many(Filter::<Task>::all()).await?, 2);
    assert_eq!(stored_one(&db, "tasks", 1).await.expect("kept"), first);
    // Every task is stored, every one marked.
    let rows = stored(&db, "tasks").await;
    assert_eq!(rows.len(), 3);
    assert!(rows
        .iter()
        .all(|r| matches!(r.get("deleted_at"), Some(Bson::DateTime(_)))));
    assert_eq!(db.odm().count(Filter::<Task>::all()).await?, 0);
    Ok(())
}

#[tokio::test]
async fn updates_and_replaces_do_not_reach_a_deleted_document() -> odm::Result<()> {
    let db = common::db().await?;
    three_tasks(&db).await?;
    let loaded = db.odm().get::<Task>(1).await?.expect("live");
    db.odm().delete_one(Task::id_field().eq(1)).await?;
    let before = stored_one(&db, "tasks", 1).await.expect("kept");
    let result = db
        .odm()
        .update_by_id::<Task>(1, Task::description().set("Rewrite the summary".to_owned()))
        .await?;
    assert_eq!(result.matched_count, 0);
    let replaced = db.odm().replace_one(&loaded).await?;
    assert_eq!(replaced.matched_count, 0);
    assert_eq!(stored_one(&db, "tasks", 1).await.expect("kept"), before);
    Ok(())
}

#[tokio::test]
async fn a_filter_naming_the_field_cannot_reach_the_deleted() -> odm::Result<()> {
    let db = common::db().await?;
    three_tasks(&db).await?;
    db.odm().delete_one(Task::id_field().eq(3)).await?;
    let marked = db
        .odm()
        .find(Task::deleted_at().ne(None::<odm::bson::DateTime>))
        .await?;
    assert!(marked.is_empty(), "{marked:?}");
    // The caller's condition and the model's are both sent.
    let find = last_command(&db, "find");
    assert!(find.get_document("filter").unwrap().contains_key("$and"));
    assert_eq!(
        db.odm().count(Task::deleted_at().exists(true)).await?,
        2,
        "the live tasks store the field as null"
    );
    Ok(())
}

#[tokio::test]
async fn a_stored_value_other_than_null_hides_the_document() -> odm::Result<()> {
    let db = common::db().await?;
    // Written by another program: one task without the field, one with an explicit null, one
    // with a value that is not a date.
    db.raw()
        .collection::<Document>("tasks")
        .insert_many([
            doc! { "_id": 1, "description": "a", "owner": "kate" },
            doc! { "_id": 2, "description": "b", "owner": "kate", "deleted_at": null },
            doc! { "_id": 3, "description": "c", "owner": "kate", "deleted_at": "yesterday" },
        ])
        .await?;
    let live: Vec<i32> = db
        .odm()
        .find(Task::owner().eq("kate"))
        .await?
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(live, [1, 2], "a missing or null field is live");
    Ok(())
}

#[tokio::test]
async fn the_field_may_be_named_and_renamed() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .insert_one(&Chore {
            id: 1,
            description: "Water the plants".to_owned(),
            removed_at: None,
        })
        .await?;
    assert_eq!(db.odm().delete_one(Chore::id_field().eq(1)).await?, 1);
    let kept = stored_one(&db, "chores", 1).await.expect("kept");
    assert!(matches!(kept.get("removedAt"), Some(Bson::DateTime(_))));
    assert_eq!(db.odm().get::<Chore>(1).await?, None);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_deleters_of_one_document_mark_it_once() -> odm::Result<()> {
    let db = common::db().await?;
    three_tasks(&db).await?;
    let deleters = (0..16).map(|_| {
        let odm = db.odm().clone();
        tokio::spawn(async move { odm.delete_one(Task::id_field().eq(2)).await })
    });
    let mut marked = 0;
    for deleter in deleters {
        marked += deleter.await.expect("joined")?;
    }
    assert_eq!(marked, 1, "exactly one deleter marked it");
    assert_eq!(db.odm().count(Filter::<Task>::all()).await?, 2);
    Ok(())
}

#[tokio::test]
async fn a_delete_in_a_transaction_that_aborts_marks_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    if !db.odm().supports_transactions().await? {
        return Ok(());
    }
    three_tasks(&db).await?;
    let mut session = db.odm().start_session().await?;
    session.start_transaction().await?;
    let n = db
        .odm()
        .delete_one(Task::id_field().eq(1))
        .session(&mut session)
        .await?;
    assert_eq!(n, 1);
    session.abort_transaction().await?;
    let kept = stored_one(&db, "tasks", 1).await.expect("kept");
    assert_eq!(kept.get("deleted_at"), Some(&Bson::Null));
    assert!(db.odm().get::<Task>(1).await?.is_some());
    Ok(())
}

#[test]
fn the_routing_report_says_a_delete_is_an_update() {
    let report = odm::shard::RoutingReport::in_catalog::<Task>(&common::catalog()).to_string();
    assert!(
        report.contains("update tasks { _id, <its shard key> } (a soft delete: `deleted_at` set)"),
        "{report}"
    );
    assert!(!report.contains("delete tasks"), "{report}");
}

/// The server marks the task but its reply is lost. A `delete_one` is a retryable write: the
/// driver sends it again, the server recognises it, and the task is marked once with the
/// first time. A `delete_many` is not: it is an error, and running it again marks only what
/// the first did not (none), keeping the first times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_whose_reply_is_lost_marks_each_document_once() -> odm::Result<()> {
    let db = common::db().await?;
    three_tasks(&db).await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let odm = proxy.odm(db.name()).await?.with_catalog(common::catalog());
    proxy.lose_replies("update", 1);
    assert_eq!(odm.delete_one(Task::id_field().eq(1)).await?, 1);
    let first = stored_one(&db, "tasks", 1).await.expect("kept");
    assert!(matches!(first.get("deleted_at"), Some(Bson::DateTime(_))));
    assert_eq!(odm.delete_one(Task::id_field().eq(1)).await?, 0);
    assert_eq!(stored_one(&db, "tasks", 1).await.expect("kept"), first);

    proxy.lose_replies("update", 1);
    odm.delete_many(Task::owner().eq("kate"))
        .await
        .expect_err("a multi-document update is not retried");
    let second = stored_one(&db, "tasks", 2).await.expect("kept");
    assert!(matches!(second.get("deleted_at"), Some(Bson::DateTime(_))));
    assert_eq!(odm.delete_many(Task::owner().eq("kate")).await?, 0);
    assert_eq!(stored_one(&db, "tasks", 1).await.expect("kept"), first);
    assert_eq!(stored_one(&db, "tasks", 2).await.expect("kept"), second);
    Ok(())
}
