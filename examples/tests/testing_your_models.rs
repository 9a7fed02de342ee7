//! The tests shown in the guide's "Testing your models" chapter. Each test gets a database of
//! its own from `TestDb`, so they run in parallel.

use std::collections::BTreeMap;

use odm::bson::{doc, Document};
use odm::mongodb::IndexModel;
use odm::prelude::*;
use odm::testing::TestDb;
use odm::Error;

// ANCHOR: model
#[derive(Model, Serialize, Deserialize, Debug, PartialEq)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[index(unique)]
    isbn: String,
    #[embed]
    publisher: Publisher,
}

#[derive(Embed, Serialize, Deserialize, Debug, PartialEq)]
struct Publisher {
    name: String,
    city: String,
}

fn gatsby() -> Book {
    Book {
        id: 1,
        title: "The Great Gatsby".into(),
        isbn: "9781857150193".into(),
        publisher: Publisher {
            name: "Everyman's Library".into(),
            city: "London".into(),
        },
    }
}
// ANCHOR_END: model

// ANCHOR: raw
#[tokio::test]
async fn the_publisher_is_stored_inside_the_book() -> odm::Result<()> {
    let db = TestDb::new().await?;
    db.odm().insert_one(&gatsby()).await?;

    // Read it back with the driver alone: this is what other programs will see.
    let books = db.raw().collection::<Document>("books");
    let stored = books.find_one(doc! { "_id": 1 }).await?.expect("inserted");
    assert_eq!(
        stored.get_document("publisher").ok(),
        Some(&doc! { "name": "Everyman's Library", "city": "London" })
    );
    Ok(())
}
// ANCHOR_END: raw

// ANCHOR: commands
#[tokio::test]
async fn a_dotted_query_is_one_find() -> odm::Result<()> {
    let db = TestDb::new().await?;
    db.odm().insert_one(&gatsby()).await?;
    db.commands().clear();

    let name = Book::publisher().name();
    let found = db.odm().find(name.eq("Everyman's Library")).await?;

    assert_eq!(found, vec![gatsby()]);
    let sent = db.commands().take();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].name, "find");
    let command = sent[0].command.as_ref().expect("the log keeps documents");
    assert_eq!(
        command.get_document("filter").ok(),
        Some(&doc! { "publisher.name": "Everyman's Library" })
    );
    Ok(())
}
// ANCHOR_END: commands

// ANCHOR: sync
#[tokio::test]
async fn syncing_twice_only_lists_the_indexes() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let first = db.odm().sync_indexes_of::<Book>().await?;
    assert_eq!(first.created(), ["books.isbn_1"]);
    db.commands().clear();

    let second = db.odm().sync_indexes_of::<Book>().await?;

    assert!(second.is_in_sync());
    assert_eq!(db.commands().names(), ["listIndexes"]);
    Ok(())
}
// ANCHOR_END: sync

// ANCHOR: sync_report
#[tokio::test]
async fn sync_reports_differences_and_drops_only_when_told() -> odm::Result<()> {
    let db = TestDb::new().await?;
    // Indexes made by hand: `isbn` without `unique`, and one that no model declares.
    let books = db.raw().collection::<Document>("books");
    books
        .create_index(IndexModel::builder().keys(doc! { "isbn": 1 }).build())
        .await?;
    books
        .create_index(IndexModel::builder().keys(doc! { "title": 1 }).build())
        .await?;

    let report = db.odm().sync_indexes_of::<Book>().await?;
    assert!(!report.is_in_sync());
    assert_eq!(
        report.to_string().lines().collect::<Vec<_>>(),
        [
            "books:",
            "  DIFFERS    isbn_1 (unique: declared true, found false)",
            "  EXTRA      title_1 (not declared by any model; kept)",
        ]
    );

    let fixed = db
        .odm()
        .sync_indexes_of::<Book>()
        .replace_differing(true)
        .drop_extra(true)
        .await?;
    assert_eq!(
        fixed.to_string().lines().collect::<Vec<_>>(),
        [
            "books:",
            "  replaced   isbn_1 (unique: declared true, found false)",
            "  dropped    title_1 (not declared by any model)",
        ]
    );
    assert!(db.odm().sync_indexes_of::<Book>().await?.is_in_sync());
    Ok(())
}
// ANCHOR_END: sync_report

// ANCHOR: duplicate
#[tokio::test]
async fn a_second_book_with_the_same_isbn_is_refused() -> odm::Result<()> {
    let db = TestDb::new().await?;
    db.odm().sync_indexes_of::<Book>().await?;
    db.odm().insert_one(&gatsby()).await?;

    let copy = Book { id: 2, ..gatsby() };
    match db.odm().insert_one(&copy).await {
        Err(Error::DuplicateKey { index, key, .. }) => {
            assert_eq!(index, "isbn_1");
            assert!(key.contains("9781857150193"), "{key}");
        }
        other => panic!("expected a duplicate key, got {other:?}"),
    }
    Ok(())
}
// ANCHOR_END: duplicate

// ANCHOR: decode
#[tokio::test]
async fn bad_stored_data_names_the_document_and_the_field() -> odm::Result<()> {
    let db = TestDb::new().await?;
    // Another program stored a city as a number.
    let books = db.raw().collection::<Document>("books");
    books
        .insert_one(doc! {
            "_id": 7, "title": "Tender Is the Night", "isbn": "9780684801544",
            "publisher": { "name": "Scribner", "city": 1934 },
        })
        .await?;

    let err = db
        .odm()
        .get::<Book>(7)
        .await
        .expect_err("the city is not a string");

    assert!(matches!(&err, Error::Decode { path, .. } if path == "publisher.city"));
    let message = err.to_string();
    assert!(
        message.starts_with(
            "cannot decode document { _id: 7 } in collection `books` at field `publisher.city`: "
        ),
        "{message}"
    );
    Ok(())
}
// ANCHOR_END: decode

// ANCHOR: invalid_key
/// Referring sites per book (workshop exercise 7): the keys are data.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "book_refs")]
struct BookRefs {
    #[serde(rename = "_id")]
    book: i32,
    referrers: BTreeMap<String, i64>,
}

#[tokio::test]
async fn a_key_with_a_dot_is_refused_before_anything_is_sent() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let refs = BookRefs {
        book: 1,
        referrers: BTreeMap::from([("google.com".to_owned(), 4)]),
    };

    let err = db.odm().insert_one(&refs).await.expect_err("`.` in a key");

    assert!(matches!(&err, Error::InvalidKey { key, path, .. }
        if key == "google.com" && path == "referrers"));
    assert_eq!(db.commands().count(), 0);
    Ok(())
}
// ANCHOR_END: invalid_key

// ANCHOR: literal
#[test]
fn a_value_is_never_read_as_an_operator() {
    // A string is sent as itself: the server reads it as nothing but a string.
    let from_a_form = "{ \"$ne\": null }";
    let filter = Book::title().eq(from_a_form);
    assert_eq!(filter.as_document(), &doc! { "title": from_a_form });

    // A document goes behind `$eq`, where its keys are data, not operators.
    let publisher = Publisher {
        name: "$where".into(),
        city: "{ \"$gt\": \"\" }".into(),
    };
    let filter = Book::publisher().eq(&publisher);
    assert_eq!(
        filter.as_document(),
        &doc! { "publisher": { "$eq": { "name": "$where", "city": "{ \"$gt\": \"\" }" } } }
    );
}
// ANCHOR_END: literal

#[tokio::test]
async fn an_aborted_transaction_leaves_nothing_behind() -> odm::Result<()> {
    let db = TestDb::new().await?;
    if !has_transactions(&db).await? {
        eprintln!("skipped: a standalone server has no transactions");
        return Ok(());
    }
    let odm = db.odm();
    odm.sync_indexes_of::<Book>().await?;

    // ANCHOR: transaction
    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    odm.insert_one(&gatsby()).session(&mut session).await?;
    let copy = Book { id: 2, ..gatsby() };
    let second = odm.insert_one(&copy).session(&mut session).await;
    assert!(second.is_err_and(|e| e.is_duplicate_key()));
    session.abort_transaction().await?;

    assert_eq!(odm.count(Filter::<Book>::all()).await?, 0);
    // ANCHOR_END: transaction
    Ok(())
}

/// Transactions need a replica set or a sharded cluster (the local server is a replica set).
async fn has_transactions(db: &TestDb) -> odm::Result<bool> {
    let hello = db.raw().run_command(doc! { "hello": 1 }).await?;
    Ok(hello.contains_key("setName") || hello.get_str("msg").ok() == Some("isdbgrid"))
}

// ANCHOR: lost_reply
/// The network loses the reply of the insert: the book reached the server, and the client
/// cannot tell. The driver sends the insert again (a retryable write), and the server
/// recognizes it as the same statement: one book, no duplicate key error.
#[tokio::test]
async fn an_insert_whose_reply_is_lost_lands_once() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let odm = proxy.odm(db.name()).await?;
    if !odm.supports_transactions().await? {
        return Ok(()); // retryable writes need a replica set
    }
    proxy.lose_replies("insert", 1);
    odm.insert_one(&gatsby()).await?;

    assert_eq!(proxy.count_of("insert"), 2);
    let books = db.raw().collection::<Document>("books");
    assert_eq!(books.count_documents(doc! {}).await?, 1);
    Ok(())
}
// ANCHOR_END: lost_reply

// ANCHOR: paused
/// The server stops answering (its process is stopped, the network hangs) while the insert is
/// on its way. The insert ends with an error once the driver's monitor gives up on the server
/// (`connectTimeoutMS`), and the error says the outcome is unknown. The insert was held, not
/// lost: when the server resumes, it lands. Inserting again tells which it was, as the id is
/// the book's own: a duplicate key means the first one landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_held_by_a_paused_server_is_told_apart_by_inserting_again() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let uri = format!(
        "{}&serverSelectionTimeoutMS=1000&connectTimeoutMS=1000&heartbeatFrequencyMS=500",
        proxy.uri()
    );
    let odm = odm::Odm::connect(&uri, db.name()).await?;
    odm.get::<Book>(0).await?; // connected

    proxy.pause();
    let err = odm.insert_one(&gatsby()).await.unwrap_err();
    assert!(err.is_outcome_unknown(), "{err}");
    proxy.resume();

    // The held insert reaches the server and lands, in its own time.
    let books = db.raw().collection::<Document>("books");
    for _ in 0..200 {
        if books.count_documents(doc! {}).await? == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    match odm.insert_one(&gatsby()).await {
        Err(e) if e.is_duplicate_key() => {} // the first insert landed
        other => panic!("the held insert should have landed: {other:?}"),
    }
    assert_eq!(books.count_documents(doc! {}).await?, 1);
    Ok(())
}
// ANCHOR_END: paused
