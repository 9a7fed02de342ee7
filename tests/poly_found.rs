//! DBRefs that name a database (`$db`): what odm reads and what its delete rules match should
//! agree. Each test fails today.

mod common;
#[path = "common/feed.rs"]
mod feed;

use common::stored;
use feed::*;
use odm::bson::{doc, Document};
use odm::prelude::*;
use odm::testing::TestDb;

async fn one_book(db: &TestDb) -> odm::Result<()> {
    db.odm()
        .insert_one(&Author {
            id: 1,
            name: "F. Scott Fitzgerald".into(),
        })
        .await?;
    db.odm()
        .insert_one(&Book {
            id: 1,
            title: "The Great Gatsby".into(),
            author: Ref::new(1),
        })
        .await?;
    Ok(())
}

/// Drivers write `$db` with the name of the database the reference lives in, often the very
/// one odm is connected to: such a DBRef names a document odm can load.
#[tokio::test]
async fn a_dbref_naming_this_database_is_read() -> odm::Result<()> {
    let db = TestDb::new().await?;
    one_book(&db).await?;
    db.raw()
        .collection::<Document>("feed")
        .insert_one(doc! {
            "_id": 1, "verb": "liked",
            "subject": { "$ref": "books", "$id": 1, "$db": db.name() },
            "mentions": [], "via": null,
        })
        .await?;
    let entry = db
        .odm()
        .get::<FeedEntry>(1)
        .populate(FeedEntry::subject())
        .await?
        .expect("inserted");
    let Subject::Book(book) = &entry.subject else {
        panic!("a book: {:?}", entry.subject)
    };
    assert_eq!(book.loaded()?.title, "The Great Gatsby");
    Ok(())
}

/// A DBRef to a document of another database is read as the catch-all's (it is not a
/// reference to this database's book), so deleting this database's book must leave it.
#[tokio::test]
async fn a_delete_rule_leaves_a_dbref_to_another_database() -> odm::Result<()> {
    let db = TestDb::new().await?;
    one_book(&db).await?;
    db.raw()
        .collection::<Document>("notes")
        .insert_one(doc! { "_id": 1, "about": { "$ref": "books", "$id": 1, "$db": "archive" } })
        .await?;
    let note = db.odm().get::<Note>(1).await?.expect("inserted");
    assert!(
        matches!(&note.about, BookOrOther::Other(r) if r.database.as_deref() == Some("archive")),
        "{note:?}"
    );
    db.odm().delete_one(Book::id_field().eq(1)).await?;
    assert_eq!(
        stored(&db, "notes").await.len(),
        1,
        "the note about archive's book 1 was deleted with this database's book 1"
    );
    Ok(())
}

/// One misuse, one compile error: a generic `PolyRef` enum is not also "missing generics" (with
/// the suggestion `enum Subject<T><T>`), and DBRef storage on a two-way reference does not also
/// report the other side's `inverse` as holding `Vec<Stored<Ref<Task>>>`. (Kept out of `ui/`
/// so that the compile-fail suite stays green until they pass.)
#[test]
fn one_misuse_is_one_compile_error() {
    trybuild::TestCases::new().compile_fail("ui_found/poly/*.rs");
}
