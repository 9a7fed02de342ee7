//! Typed CRUD against a real server: what each operation stores (read back with the raw
//! driver) and how many commands it sends.

mod common;
#[path = "common/library.rs"]
mod library;

use common::{last_command, sent, stored, stored_one};
use library::*;
use odm::bson::{doc, Bson, DateTime};
use odm::prelude::*;

#[tokio::test]
async fn insert_one_stores_the_document_as_declared() -> odm::Result<()> {
    let db = common::db().await?;
    let id = db.odm().insert_one(&gatsby()).await?;
    assert_eq!(id, 1);
    assert_eq!(sent(&db), ["insert"]);

    let raw = stored_one(&db, "books", 1).await.expect("stored");
    assert_eq!(raw.get_str("isbn").unwrap(), "9781857150193");
    assert_eq!(
        raw.get_document("publisher")
            .unwrap()
            .get_str("name")
            .unwrap(),
        "Everyman's Library"
    );
    assert_eq!(raw.get_array("subjects").unwrap().len(), 3);
    assert_eq!(
        raw.get_array("reviews").unwrap()[1]
            .as_document()
            .unwrap()
            .get_i32("user")
            .unwrap(),
        2
    );
    assert_eq!(raw.keys().next().map(String::as_str), Some("_id"));
    Ok(())
}

#[tokio::test]
async fn insert_many_sends_one_insert_and_returns_the_ids_in_order() -> odm::Result<()> {
    let db = common::db().await?;
    let books = shelf();
    let ids = db.odm().insert_many(&books).await?;
    assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    assert_eq!(sent(&db), ["insert"]);
    assert_eq!(stored(&db, "books").await.len(), 5);

    let none: Vec<Book> = Vec::new();
    assert!(db.odm().insert_many(&none).await?.is_empty());
    assert!(sent(&db).is_empty(), "an empty insert_many sends nothing");
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "notes")]
struct Note {
    #[serde(rename = "_id")]
    id: Option<ObjectId>,
    text: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "tags")]
struct Tag {
    #[serde(rename = "_id")]
    id: Option<String>,
    label: String,
}

#[tokio::test]
async fn an_absent_object_id_is_generated_client_side() -> odm::Result<()> {
    let db = common::db().await?;
    let id = db
        .odm()
        .insert_one(&Note {
            id: None,
            text: "hello".into(),
        })
        .await?;
    let raw = stored(&db, "notes").await;
    assert_eq!(raw.len(), 1);
    assert_eq!(
        raw[0].get_object_id("_id").unwrap(),
        id,
        "the returned id is the stored one, not null"
    );
    let back = db.odm().get::<Note>(id).await?.expect("found by id");
    assert_eq!(back.id, Some(id));
    Ok(())
}

#[tokio::test]
async fn an_absent_id_that_cannot_be_generated_is_an_error_and_nothing_is_sent() -> odm::Result<()>
{
    let db = common::db().await?;
    let err = db
        .odm()
        .insert_one(&Tag {
            id: None,
            label: "x".into(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, odm::Error::MissingId { ref collection } if collection == "tags"),
        "{err}"
    );
    assert!(sent(&db).is_empty());
    assert!(stored(&db, "tags").await.is_empty());
    Ok(())
}

#[tokio::test]
async fn find_applies_filter_sort_skip_and_limit_in_one_command() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&shelf()).await?;
    db.commands().clear();

    let found = db
        .odm()
        .find(Book::pages().gt(200))
        .sort(Book::pages().desc())
        .skip(1)
        .limit(2)
        .await?;
    let titles: Vec<_> = found.iter().map(|b| b.title.as_str()).collect();
    assert_eq!(titles, ["Tender Is the Night", "This Side of Paradise"]);

    let cmd = last_command(&db, "find");
    assert_eq!(
        cmd.get_document("filter").unwrap(),
        &doc! {"pages": {"$gt": 200}}
    );
    assert_eq!(cmd.get_document("sort").unwrap(), &doc! {"pages": -1});
    assert_eq!(cmd.get("skip").and_then(Bson::as_i64), Some(1));
    assert_eq!(cmd.get("limit").and_then(Bson::as_i64), Some(2));
    Ok(())
}

#[tokio::test]
async fn find_one_and_get_send_one_find_each() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&shelf()).await?;
    db.commands().clear();

    let first = db
        .odm()
        .find_one(Book::publisher().name().eq("Scribner"))
        .sort(Book::id().asc())
        .await?;
    assert_eq!(first.map(|b| b.id), Some(2));
    let missing = db.odm().get::<Book>(99).await?;
    assert!(missing.is_none());
    assert_eq!(sent(&db), ["find", "find"]);
    Ok(())
}

#[tokio::test]
async fn a_projection_decodes_into_a_view_type() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&shelf()).await?;
    db.commands().clear();

    let titles: Vec<BookTitle> = db
        .odm()
        .find(Book::subjects().contains("1920s"))
        .projection(Projection::include(&Book::title()).and_not(&Book::id()))
        .sort(Book::title().asc())
        .into_type::<BookTitle>()
        .await?;
    assert_eq!(
        titles,
        [
            BookTitle {
                title: "The Beautiful and Damned".into()
            },
            BookTitle {
                title: "The Great Gatsby".into()
            },
            BookTitle {
                title: "This Side of Paradise".into()
            },
        ]
    );
    let cmd = last_command(&db, "find");
    assert_eq!(
        cmd.get_document("projection").unwrap(),
        &doc! {"title": 1, "_id": 0}
    );
    Ok(())
}

#[tokio::test]
async fn a_large_result_is_read_in_batches() -> odm::Result<()> {
    let db = common::db().await?;
    let notes: Vec<Note> = (0..250)
        .map(|i| Note {
            id: Some(ObjectId::new()),
            text: format!("n{i}"),
        })
        .collect();
    db.odm().insert_many(&notes).await?;
    db.commands().clear();

    let all = db.odm().find::<Note>(Filter::all()).await?;
    assert_eq!(all.len(), 250);
    let names = sent(&db);
    assert_eq!(names[0], "find");
    assert!(
        names.len() >= 2 && names[1..].iter().all(|n| n == "getMore"),
        "{names:?}"
    );

    let small = db
        .odm()
        .find::<Note>(Filter::all())
        .batch_size(100)
        .limit(100)
        .await?;
    assert_eq!(small.len(), 100);
    Ok(())
}

#[tokio::test]
async fn count_sends_one_aggregate() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&shelf()).await?;
    db.commands().clear();
    assert_eq!(
        db.odm()
            .count(Book::publisher().name().eq("Scribner"))
            .await?,
        2
    );
    assert_eq!(db.odm().count::<Book>(Filter::all()).await?, 5);
    assert_eq!(sent(&db), ["aggregate", "aggregate"]);
    Ok(())
}

#[tokio::test]
async fn updates_change_exactly_what_they_say() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&shelf()).await?;
    db.commands().clear();

    let one = odm
        .update_by_id::<Book>(1, Book::pages().inc(4).and(Book::available().set(false)))
        .await?;
    assert_eq!((one.matched_count, one.modified_count), (1, 1));
    let raw = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(raw.get_i32("pages").unwrap(), 180);
    assert!(!raw.get_bool("available").unwrap());

    let review = Review {
        user: 3,
        text: "Timeless.".into(),
    };
    odm.update_one(
        Book::isbn().eq("9781857150193"),
        Book::reviews().push(&review),
    )
    .await?;
    let raw = stored_one(&db, "books", 1).await.unwrap();
    let reviews = raw.get_array("reviews").unwrap();
    assert_eq!(reviews.len(), 3);
    assert_eq!(
        reviews[2].as_document().unwrap(),
        &doc! {"user": 3, "text": "Timeless."}
    );

    let many = odm
        .update_many(
            Book::publisher().name().eq("Scribner"),
            Book::publisher().city().set("New York"),
        )
        .await?;
    assert_eq!(many.modified_count, 2);
    for raw in stored(&db, "books").await {
        let publisher = raw.get_document("publisher").unwrap();
        let expected = if publisher.get_str("name").unwrap() == "Scribner" {
            "New York"
        } else {
            "London"
        };
        assert_eq!(publisher.get_str("city").unwrap(), expected);
    }
    assert_eq!(sent(&db), ["update", "update", "update"]);
    Ok(())
}

#[tokio::test]
async fn an_update_with_nothing_in_it_is_refused_before_sending() -> odm::Result<()> {
    let db = common::db().await?;
    let err = db
        .odm()
        .update_by_id::<Book>(1, Update::raw(doc! {}))
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::EmptyUpdate { .. }), "{err}");
    assert!(sent(&db).is_empty());
    Ok(())
}

#[tokio::test]
async fn replace_one_swaps_the_whole_document_by_id() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&gatsby()).await?;
    let mut changed = gatsby();
    changed.title = "Trimalchio".into();
    changed.reviews.clear();
    let res = db.odm().replace_one(&changed).await?;
    assert_eq!(res.modified_count, 1);
    let raw = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(raw.get_str("title").unwrap(), "Trimalchio");
    assert!(raw.get_array("reviews").unwrap().is_empty());

    let mut new_book = gatsby();
    new_book.id = 50;
    new_book.isbn = "isbn-50".into();
    db.odm().replace_one(&new_book).upsert(true).await?;
    assert!(stored_one(&db, "books", 50).await.is_some());
    Ok(())
}

#[tokio::test]
async fn deletes_remove_what_matches() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&shelf()).await?;
    db.commands().clear();
    assert_eq!(
        db.odm()
            .delete_one(Book::publisher().name().eq("Scribner"))
            .await?,
        1
    );
    assert_eq!(db.odm().delete_many(Book::pages().lt(400)).await?, 3);
    assert_eq!(sent(&db), ["delete", "delete"]);
    let left: Vec<i32> = stored(&db, "books")
        .await
        .iter()
        .map(|d| d.get_i32("_id").unwrap())
        .collect();
    assert_eq!(left, [3]);
    Ok(())
}

fn loan(borrower: &str, book: i32, priority: i32) -> Loan {
    Loan {
        id: LoanId {
            borrower: borrower.into(),
            book,
        },
        pending: false,
        approved: false,
        priority,
        started: None,
    }
}

/// Seed exercise 3: find the highest-priority request and mark it pending, atomically.
#[tokio::test]
async fn the_loan_queue_takes_the_highest_priority_request() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&[loan("bob", 1, 1), loan("ann", 2, 3), loan("cid", 1, 2)])
        .await?;
    db.commands().clear();

    let taken = odm
        .find_one_and_update(
            Loan::pending().eq(false),
            Loan::pending()
                .set(true)
                .and(Loan::started().set(Some(DateTime::now()))),
        )
        .sort(Loan::priority().desc())
        .return_new()
        .await?
        .expect("a pending request");
    assert_eq!(
        taken.id,
        LoanId {
            borrower: "ann".into(),
            book: 2
        }
    );
    assert!(taken.pending && taken.started.is_some());
    assert_eq!(sent(&db), ["findAndModify"]);

    let raw = stored_one(&db, "loans", doc! {"borrower": "ann", "book": 2})
        .await
        .unwrap();
    assert!(raw.get_bool("pending").unwrap());
    assert!(matches!(raw.get("started"), Some(Bson::DateTime(_))));

    // By default the document comes back as it was before the update.
    let before = odm
        .find_one_and_update(Loan::pending().eq(false), Loan::pending().set(true))
        .sort(Loan::priority().desc())
        .await?
        .unwrap();
    assert_eq!(before.id.borrower, "cid");
    assert!(!before.pending);
    Ok(())
}

#[tokio::test]
async fn operations_run_inside_the_callers_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&gatsby()).await?;

    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    odm.insert_one(&loan("bob", 1, 1))
        .session(&mut session)
        .await?;
    odm.update_by_id::<Book>(1, Book::available().set(false))
        .session(&mut session)
        .await?;
    let inside = odm
        .find::<Loan>(Filter::all())
        .session(&mut session)
        .await?;
    assert_eq!(inside.len(), 1, "the transaction sees its own insert");
    assert!(
        stored(&db, "loans").await.is_empty(),
        "others do not see it before commit"
    );
    session.abort_transaction().await?;
    assert!(stored(&db, "loans").await.is_empty());
    assert!(stored_one(&db, "books", 1)
        .await
        .unwrap()
        .get_bool("available")
        .unwrap());

    session.start_transaction().await?;
    odm.insert_one(&loan("bob", 1, 1))
        .session(&mut session)
        .await?;
    odm.delete_one(Book::id().eq(1))
        .session(&mut session)
        .await?;
    assert_eq!(
        odm.count::<Loan>(Filter::all())
            .session(&mut session)
            .await?,
        1
    );
    session.commit_transaction().await?;
    assert_eq!(stored(&db, "loans").await.len(), 1);
    assert!(stored_one(&db, "books", 1).await.is_none());

    let txn_inserts = db
        .commands()
        .take()
        .into_iter()
        .filter(|c| c.name == "insert")
        .filter(|c| {
            c.command
                .as_ref()
                .is_some_and(|d| matches!(d.get_bool("autocommit"), Ok(false)))
        })
        .count();
    assert_eq!(
        txn_inserts, 2,
        "both transactional inserts carried the transaction number"
    );
    Ok(())
}
