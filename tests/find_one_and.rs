//! `find_one_and_delete` and `find_one_and_replace`: one `findAndModify` for a model nothing
//! maintains, and, for one with soft deletes, delete rules or copies, the document read and
//! then written as `delete_one` and `replace_one` write it, so that everything they maintain is
//! kept. What landed is read back with the raw driver; commands are counted.

mod common;

use common::{sent, stored, stored_one};
use odm::bson::Bson;
use odm::prelude::*;

// ANCHOR: job
/// A job of a queue: taken by the worker that deletes it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "jobs")]
struct Job {
    #[serde(rename = "_id")]
    id: i32,
    queued_at: i64,
    kind: String,
}
// ANCHOR_END: job

/// A task kept for the history when taken: deleting it marks it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "tasks", soft_delete)]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    queued_at: i64,
    deleted_at: Option<odm::bson::DateTime>,
}

/// An author whose name books copy.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade")]
    author: Ref<Author>,
    #[denormalize(from = "Author", via = "author", fields = "name")]
    #[serde(default)]
    author_name: String,
}

fn job(id: i32, queued_at: i64, kind: &str) -> Job {
    Job {
        id,
        queued_at,
        kind: kind.to_owned(),
    }
}

async fn jobs(db: &odm::testing::TestDb) -> odm::Result<()> {
    db.odm()
        .insert_many(&[job(1, 30, "mail"), job(2, 10, "mail"), job(3, 20, "report")])
        .await?;
    db.commands().clear();
    Ok(())
}

#[tokio::test]
async fn a_plain_model_is_taken_with_one_find_and_modify() -> odm::Result<()> {
    let db = common::db().await?;
    jobs(&db).await?;
    let odm = db.odm();
    // ANCHOR: take
    let next = odm
        .find_one_and_delete(Job::kind().eq("mail"))
        .sort(Job::queued_at().asc())
        .await?;
    // ANCHOR_END: take
    assert_eq!(next.map(|j| j.id), Some(2), "the oldest mail job");
    assert_eq!(sent(&db), ["findAndModify"]);
    assert!(stored_one(&db, "jobs", 2).await.is_none());
    assert_eq!(stored(&db, "jobs").await.len(), 2);
    assert_eq!(odm.find_one_and_delete(Job::kind().eq("sms")).await?, None);
    Ok(())
}

#[tokio::test]
async fn a_plain_replacement_returns_the_document_before_or_after() -> odm::Result<()> {
    let db = common::db().await?;
    jobs(&db).await?;
    let odm = db.odm();
    // ANCHOR: replace
    let urgent = job(3, 0, "report");
    let before = odm
        .find_one_and_replace(Job::kind().eq("report"), &urgent)
        .await?;
    // ANCHOR_END: replace
    assert_eq!(before.map(|j| j.queued_at), Some(20));
    assert_eq!(sent(&db), ["findAndModify"]);
    let row = stored_one(&db, "jobs", 3).await.expect("kept");
    assert_eq!(row.get_i64("queued_at").ok(), Some(0));
    let later = job(3, 5, "report");
    let after = odm
        .find_one_and_replace(Filter::all(), &later)
        .return_new()
        .await?;
    assert_eq!(after, Some(later));
    // The filter must match the document with the replacement's id: nothing else is replaced.
    let elsewhere = job(3, 99, "report");
    let none = odm
        .find_one_and_replace(Job::kind().eq("mail"), &elsewhere)
        .await?;
    assert_eq!(none, None);
    let row = stored_one(&db, "jobs", 3).await.expect("kept");
    assert_eq!(row.get_i64("queued_at").ok(), Some(5));
    Ok(())
}

#[tokio::test]
async fn a_soft_deleting_model_is_marked_not_removed() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let task = |id: i32, queued_at: i64| Task {
        id,
        queued_at,
        deleted_at: None,
    };
    odm.insert_many(&[task(1, 20), task(2, 10)]).await?;
    let tx = odm.supports_transactions().await?;
    db.commands().clear();
    let taken = odm
        .find_one_and_delete(Filter::<Task>::all())
        .sort(Task::queued_at().asc())
        .await?;
    assert_eq!(taken.map(|t| t.id), Some(2));
    let mut expected = vec!["find", "update"];
    if tx {
        expected.push("commitTransaction");
    }
    assert_eq!(sent(&db), expected);
    let row = stored_one(&db, "tasks", 2).await.expect("kept, marked");
    assert!(matches!(row.get("deleted_at"), Some(Bson::DateTime(_))));
    let next = odm.find_one_and_delete(Filter::<Task>::all()).await?;
    assert_eq!(next.map(|t| t.id), Some(1));
    assert_eq!(odm.find_one_and_delete(Filter::<Task>::all()).await?, None);
    Ok(())
}

#[tokio::test]
async fn the_delete_rules_and_copies_are_kept() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&[
        Author {
            id: 1,
            name: "Ann".to_owned(),
        },
        Author {
            id: 2,
            name: "Bo".to_owned(),
        },
    ])
    .await?;
    let book = |id: i32, author: i32| Book {
        id,
        author: Ref::new(author),
        author_name: String::new(),
    };
    odm.insert_many(&[book(10, 1), book(11, 1), book(20, 2)])
        .await?;
    // A replacement of the source: the copies follow.
    let renamed = Author {
        id: 1,
        name: "Ann Smith".to_owned(),
    };
    let before = odm
        .find_one_and_replace(Author::name().eq("Ann"), &renamed)
        .await?;
    assert_eq!(before.map(|a| a.name), Some("Ann".to_owned()));
    for id in [10, 11] {
        let row = stored_one(&db, "books", id).await.expect("stored");
        assert_eq!(row.get_str("author_name").ok(), Some("Ann Smith"));
    }
    // A delete of the source: its books go with it (`cascade`).
    let gone = odm.find_one_and_delete(Author::id_field().eq(1)).await?;
    assert_eq!(gone.map(|a| a.name), Some("Ann Smith".to_owned()));
    let left: Vec<i32> = stored(&db, "books")
        .await
        .iter()
        .map(|b| b.get_i32("_id").unwrap())
        .collect();
    assert_eq!(left, [20]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_workers_take_each_task_once() -> odm::Result<()> {
    let db = common::db().await?;
    let tasks: Vec<Task> = (0..24)
        .map(|id| Task {
            id,
            queued_at: i64::from(id),
            deleted_at: None,
        })
        .collect();
    db.odm().insert_many(&tasks).await?;
    let workers = (0..8).map(|_| {
        let odm = db.odm().clone();
        tokio::spawn(async move {
            let mut taken: Vec<i32> = Vec::new();
            while let Some(t) = odm
                .find_one_and_delete(Filter::<Task>::all())
                .sort(Task::queued_at().asc())
                .await?
            {
                taken.push(t.id);
            }
            Ok::<_, odm::Error>(taken)
        })
    });
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await.expect("joined")?);
    }
    all.sort_unstable();
    assert_eq!(
        all,
        (0..24).collect::<Vec<_>>(),
        "each task taken exactly once"
    );
    let marked = stored(&db, "tasks").await;
    assert!(marked
        .iter()
        .all(|t| matches!(t.get("deleted_at"), Some(Bson::DateTime(_)))));
    Ok(())
}
