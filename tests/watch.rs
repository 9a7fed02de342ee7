//! `odm.watch::<T>()`: the changes of a model's collection as typed events, with a resume
//! token the application stores. The writes come from odm and from the raw driver (another
//! program); each event is checked against what was written.

mod common;

use std::time::Duration;

use futures_util::TryStreamExt;
use odm::bson::{doc, Document};
use odm::ops::{ChangeKind, Changes};
use odm::prelude::*;

// ANCHOR: model
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    pages: i32,
}
// ANCHOR_END: model

fn book(id: i32, title: &str, pages: i32) -> Book {
    Book {
        id,
        title: title.to_owned(),
        pages,
    }
}

/// The next change, waiting at most ten seconds for it.
async fn next(changes: &mut Changes<'_, Book>) -> odm::Result<odm::ops::Change<Book>> {
    tokio::time::timeout(Duration::from_secs(10), changes.try_next())
        .await
        .expect("a change within ten seconds")?
        .ok_or_else(|| odm::Error::Unsupported("the stream ended".to_owned()))
}

#[tokio::test]
async fn every_write_is_one_typed_change_and_the_stream_resumes_after_a_token() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    // ANCHOR: watch
    let mut changes = odm.watch::<Book>().await?;
    // ANCHOR_END: watch
    odm.insert_one(&book(1, "Dune", 412)).await?;
    odm.update_by_id::<Book>(1, Book::pages().set(896)).await?;
    odm.replace_one(&book(1, "Dune Messiah", 256)).await?;
    odm.delete_one(Book::id_field().eq(1)).await?;

    let inserted = next(&mut changes).await?;
    assert_eq!(inserted.kind, ChangeKind::Insert);
    assert_eq!(inserted.document, Some(book(1, "Dune", 412)));
    let updated = next(&mut changes).await?;
    assert_eq!(updated.kind, ChangeKind::Update);
    assert_eq!(updated.updated_fields, Some(doc! { "pages": 896 }));
    assert_eq!(updated.document, None, "no lookup asked");
    let replaced = next(&mut changes).await?;
    assert_eq!(replaced.kind, ChangeKind::Replace);
    assert_eq!(
        replaced.document.map(|b| b.title),
        Some("Dune Messiah".to_owned())
    );
    let deleted = next(&mut changes).await?;
    assert_eq!(deleted.kind, ChangeKind::Delete);
    assert_eq!(deleted.id, odm::bson::Bson::Int32(1));

    // ANCHOR: resume
    // Stored after the update: the stream opened again gives what came after it.
    let mut again = odm.watch::<Book>().resume_after(updated.token).await?;
    // ANCHOR_END: resume
    assert_eq!(next(&mut again).await?.kind, ChangeKind::Replace);
    assert_eq!(next(&mut again).await?.kind, ChangeKind::Delete);
    Ok(())
}

#[tokio::test]
async fn another_programs_writes_are_changes_and_a_bad_document_is_a_typed_error() -> odm::Result<()>
{
    let db = common::db().await?;
    let odm = db.odm();
    let mut changes = odm
        .watch::<Book>()
        .with_documents_of_updates()
        .batch_size(10)
        .max_await_time(Duration::from_millis(200))
        .await?;
    let raw = db.raw().collection::<Document>("books");
    raw.insert_one(doc! { "_id": 7, "title": "Emma", "pages": 474 })
        .await?;
    raw.update_one(doc! { "_id": 7 }, doc! { "$set": { "pages": 500 } })
        .await?;
    // Stored by another program with a string where the model has a number.
    raw.insert_one(doc! { "_id": 8, "title": "Persuasion", "pages": "many" })
        .await?;
    raw.insert_one(doc! { "_id": 9, "title": "Sanditon", "pages": 160 })
        .await?;
    // Other collections are not in the stream.
    db.raw()
        .collection::<Document>("authors")
        .insert_one(doc! { "_id": 1 })
        .await?;

    assert_eq!(next(&mut changes).await?.kind, ChangeKind::Insert);
    let updated = next(&mut changes).await?;
    assert_eq!(updated.document, Some(book(7, "Emma", 500)), "looked up");
    let bad = tokio::time::timeout(Duration::from_secs(10), changes.try_next())
        .await
        .expect("an event");
    let message = bad.expect_err("a string in a number field").to_string();
    assert!(
        message.contains("books") && message.contains('8') && message.contains("pages"),
        "{message}"
    );
    // The stream goes on after the bad document.
    assert_eq!(next(&mut changes).await?.id, odm::bson::Bson::Int32(9));
    assert!(changes.resume_token().is_some());
    Ok(())
}
