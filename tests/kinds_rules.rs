//! Single-collection inheritance: a kind's delete rules and the copies taken from a kind touch
//! documents of that kind only, though every kind shares the collection and the field names.

mod common;

use common::{stored, stored_one};
use odm::prelude::*;
use odm::testing::TestDb;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "writers")]
pub struct Writer {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
}

/// Two kinds whose references to a writer carry different delete rules.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books", common = "title")]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Book {
    Single(SingleBook),
    Series(SeriesBook),
}

/// A single book outlives its writer: the reference is set to `null`.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Book")]
pub struct SingleBook {
    #[serde(rename = "_id")]
    pub id: i32,
    pub title: String,
    #[reference(on_delete = "nullify")]
    pub writer: Option<Ref<Writer>>,
}

/// A series book goes with its writer, or keeps the writer from being deleted (see each test).
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Book")]
pub struct SeriesBook {
    #[serde(rename = "_id")]
    pub id: i32,
    pub title: String,
    #[reference(on_delete = "cascade")]
    pub writer: Ref<Writer>,
    /// Two-way: the bookmarks of a series book, each naming the book back.
    #[reference(many, max = 10, inverse = "book")]
    #[serde(default)]
    pub bookmarks: Vec<Ref<Bookmark>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bookmarks")]
pub struct Bookmark {
    #[serde(rename = "_id")]
    pub id: i32,
    #[parent(inverse = "bookmarks", on_delete = "cascade")]
    pub book: Ref<SeriesBook>,
}

/// A reading list copies the titles of series books.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "reading_lists")]
pub struct ReadingList {
    #[serde(rename = "_id")]
    pub id: i32,
    #[reference]
    pub book: Ref<SeriesBook>,
    #[denormalize(from = "SeriesBook", via = "book", fields = "title")]
    pub book_title: String,
}

async fn shelf(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    odm.insert_one(&Writer {
        id: 1,
        name: "Dave Duncan".into(),
    })
    .await?;
    odm.insert_one(&SingleBook {
        id: 1,
        title: "A single book".into(),
        writer: Some(Ref::new(1)),
    })
    .await?;
    odm.insert_one(&SeriesBook {
        id: 47,
        title: "The Wizard Chase".into(),
        writer: Ref::new(1),
        bookmarks: Vec::new(),
    })
    .await?;
    Ok(())
}

/// `on_delete` is declared on a kind's field: deleting the writer cascades to the series book
/// and nullifies the single book's reference. Each rule's commands carry its kind, so the
/// cascade of `SeriesBook` does not reach the single book, whose `writer` names the same writer.
#[tokio::test]
async fn a_kinds_delete_rule_applies_to_that_kind_only() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    db.odm().delete_one(Writer::id_field().eq(1)).await?;
    assert!(
        stored_one(&db, "books", 47).await.is_none(),
        "the series book cascades"
    );
    let single = stored_one(&db, "books", 1).await;
    let single = single.expect("the single book is nullified, not deleted");
    assert_eq!(
        single.get("writer"),
        Some(&odm::bson::Bson::Null),
        "{single}"
    );
    Ok(())
}

/// A `Ref<SeriesBook>` naming a single book is dangling, as `populate` reports it (the loading
/// query includes `{type: {$eq: "series"}}`), and so is the copy taken through it.
#[tokio::test]
async fn a_copy_from_a_kind_does_not_read_another_kind() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm();
    // What a reference to no document at all gives.
    let missing = odm
        .insert_one(&ReadingList {
            id: 2,
            book: Ref::new(999),
            book_title: String::new(),
        })
        .await;
    assert!(
        matches!(missing, Err(odm::Error::DanglingReference { .. })),
        "{missing:?}"
    );
    let result = odm
        .insert_one(&ReadingList {
            id: 1,
            book: Ref::new(1),
            book_title: String::new(),
        })
        .await;
    let lists = stored(&db, "reading_lists").await;
    assert!(
        matches!(result, Err(odm::Error::DanglingReference { .. })),
        "the single book 1 is not a SeriesBook: {result:?}, stored {lists:?}"
    );
    Ok(())
}

/// A two-way reference on a kind: moving a bookmark from one series book to another updates
/// both sides, and the sweep finds nothing to repair.
#[tokio::test]
async fn a_two_way_reference_on_a_kind_moves_both_sides() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm();
    odm.insert_one(&SeriesBook {
        id: 48,
        title: "The Wizard Hunt".into(),
        writer: Ref::new(1),
        bookmarks: Vec::new(),
    })
    .await?;
    odm.insert_one(&Bookmark {
        id: 1,
        book: Ref::new(47),
    })
    .await?;
    odm.update_by_id::<SeriesBook>(47, SeriesBook::bookmarks().push(Ref::new(1)))
        .await?;
    odm.reassign(Bookmark::book(), 1, 48).await?;
    let listed = |d: odm::bson::Document| d.get_array("bookmarks").unwrap().clone();
    assert!(listed(stored_one(&db, "books", 47).await.unwrap()).is_empty());
    assert_eq!(
        listed(stored_one(&db, "books", 48).await.unwrap()),
        vec![odm::bson::Bson::Int32(1)]
    );
    let report = odm.verify_inverse(Bookmark::book()).await?;
    assert!(report.issues.is_empty(), "{report:?}");
    // Deleting the series book cascades to its bookmark.
    odm.delete_one(SeriesBook::id_field().eq(48)).await?;
    assert!(stored(&db, "bookmarks").await.is_empty());
    Ok(())
}
