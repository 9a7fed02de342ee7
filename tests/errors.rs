//! Bad data in the database gives a typed error naming collection, `_id` and field path.

mod common;
#[path = "common/library.rs"]
mod library;

use library::*;
use odm::bson::{doc, Document};
use odm::prelude::*;
use odm::testing::TestDb;

async fn store_raw(db: &TestDb, collection: &str, doc: Document) {
    db.raw()
        .collection::<Document>(collection)
        .insert_one(doc)
        .await
        .expect("raw insert");
}

fn decode_error(err: odm::Error) -> (String, String, String, String) {
    match err {
        odm::Error::Decode {
            collection,
            id,
            path,
            message,
        } => (collection, id, path, message),
        other => panic!("expected a decode error, got {other}"),
    }
}

fn raw_book(id: i32) -> Document {
    let mut d = odm::bson::serialize_to_document(&gatsby()).expect("encodes");
    d.insert("_id", id);
    d.insert("isbn", format!("isbn-{id}"));
    d
}

#[tokio::test]
async fn a_missing_field_names_collection_id_and_path() -> odm::Result<()> {
    let db = common::db().await?;
    let mut bad = raw_book(7);
    bad.get_document_mut("publisher").unwrap().remove("city");
    store_raw(&db, "books", bad).await;

    let err = db.odm().find::<Book>(Filter::all()).await.unwrap_err();
    let message = err.to_string();
    let (collection, id, path, detail) = decode_error(err);
    assert_eq!(collection, "books");
    assert_eq!(id, "{ _id: 7 }");
    assert_eq!(path, "publisher.city");
    assert!(detail.contains("city"), "{detail}");
    assert!(
        message.contains("books")
            && message.contains("_id: 7")
            && message.contains("publisher.city"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn a_wrong_type_inside_an_array_names_the_element() -> odm::Result<()> {
    let db = common::db().await?;
    let mut bad = raw_book(8);
    bad.insert(
        "reviews",
        vec![
            doc! {"user": 1, "text": "fine"},
            doc! {"user": "two", "text": "typo"},
        ],
    );
    store_raw(&db, "books", bad).await;
    let (collection, id, path, _) = decode_error(db.odm().get::<Book>(8).await.unwrap_err());
    assert_eq!(
        (collection.as_str(), id.as_str(), path.as_str()),
        ("books", "{ _id: 8 }", "reviews.1.user")
    );
    Ok(())
}

#[tokio::test]
async fn a_good_document_after_a_bad_one_is_not_silently_dropped() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&gatsby()).await?;
    let mut bad = raw_book(9);
    bad.insert("pages", "many");
    store_raw(&db, "books", bad).await;
    // The whole query fails rather than returning a partial list.
    let err = db.odm().find::<Book>(Filter::all()).await.unwrap_err();
    let (_, id, path, _) = decode_error(err);
    assert_eq!((id.as_str(), path.as_str()), ("{ _id: 9 }", "pages"));
    // Queries that do not touch the bad document still work.
    assert_eq!(db.odm().find(Book::id().eq(1)).await?.len(), 1);
    Ok(())
}

#[tokio::test]
async fn find_one_and_update_reports_the_document_it_could_not_decode() -> odm::Result<()> {
    let db = common::db().await?;
    store_raw(
        &db,
        "loans",
        doc! {"_id": {"borrower": "bob", "book": 1}, "pending": false, "priority": 1},
    )
    .await;
    let err = db
        .odm()
        .find_one_and_update(Loan::pending().eq(false), Loan::pending().set(true))
        .await
        .unwrap_err();
    let (collection, id, path, _) = decode_error(err);
    assert_eq!(collection, "loans");
    assert!(id.contains("bob"), "{id}");
    assert_eq!(path, "approved");
    Ok(())
}

#[tokio::test]
async fn a_document_without_an_id_says_so() -> odm::Result<()> {
    let db = common::db().await?;
    store_raw(&db, "authors", doc! {"_id": 3, "first_name": "F. Scott"}).await;
    let (_, id, path, _) = decode_error(db.odm().find::<Author>(Filter::all()).await.unwrap_err());
    assert_eq!((id.as_str(), path.as_str()), ("{ _id: 3 }", "last_name"));

    // A projection that leaves `_id` out, decoded into the full model: the error still says
    // which field is missing, and that there was no id to report.
    let err = db
        .odm()
        .find::<Author>(Filter::all())
        .projection(Projection::exclude(&Author::id()))
        .await
        .unwrap_err();
    let (_, id, _, _) = decode_error(err);
    assert_eq!(id, "<no _id>");
    Ok(())
}

#[tokio::test]
async fn a_refused_write_names_the_collection_and_what_it_wrote() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&gatsby()).await?;
    let err = db
        .odm()
        .update_by_id::<Book>(1, Update::raw(doc! {"$inc": {"title": 1}}))
        .await
        .unwrap_err();
    assert_eq!(write_target(&err), ("books", r#"{ "_id": 1 }"#));
    assert!(err.driver_error().is_some(), "the driver's error is inside");
    assert!(!err.is_transient());
    assert!(
        err.to_string()
            .starts_with(r#"write to collection `books` ({ "_id": 1 }) failed: "#),
        "{err}"
    );
    // The server's words and code, as a person reads them: not the driver's dump of the raw
    // reply.
    let message = err.to_string();
    assert!(message.contains("(code "), "{message}");
    assert!(
        !message.contains("RawDocumentBuf") && !message.contains("server response"),
        "{message}"
    );
    assert!(
        message.len() < 400,
        "{} characters: {message}",
        message.len()
    );
    let stored = db
        .raw()
        .collection::<Document>("books")
        .find_one(doc! {"_id": 1})
        .await?
        .unwrap();
    assert_eq!(stored.get_str("title").unwrap(), gatsby().title);
    Ok(())
}

#[tokio::test]
async fn a_refused_write_by_another_filter_names_that_filter() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&gatsby()).await?;
    let err = db
        .odm()
        .update_one(
            Book::isbn().eq("9781857150193"),
            Update::raw(doc! {"$inc": {"title": 1}}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        write_target(&err),
        ("books", r#"{ "isbn": "9781857150193" }"#)
    );
    Ok(())
}

/// A handle whose catalog does not hold the model makes the model's collection for each write
/// (the handle keeps one only for its catalog's models): the same commands, the same effects.
#[tokio::test]
async fn writes_of_a_model_outside_the_catalog_land_as_the_others_do() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm().clone().with_catalog(odm::Catalog::new());
    db.commands().clear();
    odm.insert_one(&gatsby()).await?;
    odm.update_by_id::<Book>(1, Book::pages().set(180)).await?;
    let mut changed = gatsby();
    changed.title = "Gatsby".into();
    odm.replace_one(&changed).await?;
    assert_eq!(
        common::sent(&db),
        ["insert", "update", "update"],
        "one command each"
    );
    let stored = common::stored_one(&db, "books", 1).await.expect("stored");
    assert_eq!(stored.get_str("title").ok(), Some("Gatsby"));
    assert_eq!(
        stored.get_i32("pages").ok(),
        Some(176),
        "the replacement wins"
    );
    let err = odm
        .update_by_id::<Book>(1, Update::raw(doc! {"$inc": {"title": 1}}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(r#"write to collection `books` ({ "_id": 1 }) failed: "#),
        "{err}"
    );
    assert_eq!(odm.delete_one(Book::id_field().eq(1)).await?, 1);
    assert!(common::stored_one(&db, "books", 1).await.is_none());
    Ok(())
}

/// The target a refused write names, from its `Error::Write`.
fn write_target(err: &odm::Error) -> (&str, &str) {
    match err {
        odm::Error::Write {
            collection, target, ..
        } => (collection.as_str(), target.as_str()),
        other => panic!("expected a write error, got {other:?}"),
    }
}

/// A refused update names its filter by `_id` whatever the id's type (an `ObjectId`, a
/// document), and a refused insert or replacement names its document as the shell prints it
/// (here refused by the collection's validator, which says which document failed).
#[tokio::test]
async fn a_refused_write_names_its_document_whatever_the_id() -> odm::Result<()> {
    let db = common::db().await?;
    let rec = Recommendation {
        id: odm::bson::oid::ObjectId::new(),
        book: 1,
        user: 2,
    };
    db.odm().insert_one(&rec).await?;
    let err = db
        .odm()
        .update_by_id::<Recommendation>(rec.id, Update::raw(doc! {"$inc": {"_id": 1}}))
        .await
        .unwrap_err();
    let shown = format!(r#"{{ "_id": ObjectId("{}") }}"#, rec.id.to_hex());
    assert_eq!(write_target(&err), ("recommendations", shown.as_str()));

    let loan = Loan {
        id: LoanId {
            borrower: "ann".into(),
            book: 1,
        },
        pending: true,
        approved: false,
        priority: 1,
        started: None,
    };
    db.odm().insert_one(&loan).await?;
    let err = db
        .odm()
        .update_by_id::<Loan>(loan.id.clone(), Update::raw(doc! {"$inc": {"pending": 1}}))
        .await
        .unwrap_err();
    // A document value is matched literally (`$eq`), as it was sent.
    assert_eq!(
        write_target(&err),
        (
            "loans",
            r#"{ "_id": { "$eq": { "borrower": "ann", "book": 1 } } }"#
        )
    );

    // Books of more than 1,000 pages are refused by the collection's validator.
    db.raw()
        .run_command(doc! {"create": "books", "validator": {"pages": {"$lt": 1000}}})
        .await?;
    let mut long = gatsby();
    long.pages = 2000;
    let invalid = |err: odm::Error| match err {
        odm::Error::DocumentInvalid { collection, id, .. } => (collection, id),
        other => panic!("expected the validator's refusal, got {other:?}"),
    };
    let err = db.odm().insert_one(&long).await.unwrap_err();
    assert_eq!(invalid(err), ("books".into(), "{ _id: 1 }".into()));
    db.odm().insert_one(&gatsby()).await?;
    let err = db.odm().replace_one(&long).await.unwrap_err();
    assert_eq!(invalid(err), ("books".into(), "{ _id: 1 }".into()));
    let stored = common::stored_one(&db, "books", 1).await.expect("stored");
    assert_eq!(stored.get_i32("pages").ok(), Some(gatsby().pages));
    Ok(())
}

/// A counter serde cannot write as BSON once it passes `i64::MAX`.
#[derive(odm::Model, serde::Serialize, serde::Deserialize, Debug, Clone)]
#[odm(collection = "tallies")]
struct Tally {
    #[serde(rename = "_id")]
    id: i32,
    hits: u64,
}

/// A document that cannot be encoded is refused as odm's own encoding refuses it, whether odm
/// or the driver serializes it, and nothing is written.
#[tokio::test]
async fn a_document_serde_cannot_write_is_refused_before_it_is_sent() -> odm::Result<()> {
    let db = common::db().await?;
    let huge = Tally {
        id: 1,
        hits: u64::MAX,
    };
    let refused = |err: odm::Error| match err {
        odm::Error::Encode {
            collection, what, ..
        } => assert_eq!(
            (collection.as_str(), what.as_str()),
            ("tallies", "document")
        ),
        other => panic!("expected an encoding error, got {other:?}"),
    };
    refused(db.odm().insert_one(&huge).await.unwrap_err());
    let tallies = db.raw().collection::<Document>("tallies");
    assert_eq!(tallies.count_documents(doc! {}).await?, 0);
    db.odm().insert_one(&Tally { id: 1, hits: 1 }).await?;
    refused(db.odm().replace_one(&huge).await.unwrap_err());
    let stored = tallies.find_one(doc! {"_id": 1}).await?.expect("stored");
    assert_eq!(stored.get_i64("hits").ok(), Some(1), "{stored}");
    Ok(())
}
