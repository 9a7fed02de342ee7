//! The tests shown in the guide's "Single-collection inheritance" chapter: a program that knows
//! one kind of a collection's documents and takes every other kind with a catch-all variant.
//! Each test gets a database of its own.

use odm::bson::{doc, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::Error;

// ANCHOR: catch_all
/// What a program about series alone knows of the catalog: series books, and the rest.
#[derive(Model, Serialize, Deserialize, Debug, PartialEq)]
#[odm(collection = "catalog")]
#[serde(tag = "type", rename_all = "snake_case")]
enum CatalogEntry {
    Series(Volume),
    /// Any other `type`: the document is read, and nothing of it is kept.
    #[serde(other)]
    Other,
}

#[derive(Model, Serialize, Deserialize, Debug, PartialEq)]
#[odm(kind_of = "CatalogEntry")]
struct Volume {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    series_title: String,
}
// ANCHOR_END: catch_all

// ANCHOR: other
#[tokio::test]
async fn a_catch_all_takes_the_kinds_this_program_does_not_know() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let catalog = db.raw().collection::<Document>("catalog");
    catalog
        .insert_many([
            doc! { "_id": 46, "type": "series", "title": "The Wizard Hunt", "series_title": "The Wizard's Trilogy" },
            doc! { "_id": 5, "type": "single", "title": "The Crucible", "isbn": "9780141182551" },
            doc! { "_id": 90, "type": "ebook", "title": "The Wizard Chase" },
        ])
        .await?;

    let entries: Vec<CatalogEntry> = db
        .odm()
        .find(Filter::all())
        .sort(CatalogEntry::id_field().asc())
        .await?;
    let hunt = Volume {
        id: 46,
        title: "The Wizard Hunt".into(),
        series_title: "The Wizard's Trilogy".into(),
    };
    assert_eq!(
        entries,
        [
            CatalogEntry::Other,
            CatalogEntry::Series(hunt),
            CatalogEntry::Other
        ]
    );

    // A document without a `type` names no kind at all: the catch-all does not take it.
    catalog
        .insert_one(doc! { "_id": 91, "title": "Untyped" })
        .await?;
    let err = db
        .odm()
        .find::<CatalogEntry>(Filter::all())
        .await
        .expect_err("a document without a kind");
    assert!(matches!(&err, Error::UnknownKind { value, .. } if value == "<missing>"));

    // Nothing of the other document was kept, so it cannot be written back.
    let err = db
        .odm()
        .insert_one(&CatalogEntry::Other)
        .await
        .expect_err("no id");
    assert!(matches!(err, Error::MissingId { .. }));
    Ok(())
}
// ANCHOR_END: other
