//! Populated references serialized for output (`odm::expanded`): the documents they hold, at
//! any depth, while the model itself, and what odm stores, keep writing ids.

mod common;

use common::stored_one;
use odm::bson::doc;
use odm::prelude::*;
use serde_json::json;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "publishers")]
struct Publisher {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    publisher: Ref<Publisher>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference]
    author: Ref<Author>,
    /// Stored as DBRefs, as other programs reading `books` expect.
    #[reference(many, max = 5)]
    #[serde(with = "odm::dbref")]
    related: Vec<Ref<Book>>,
}

async fn seed(odm: &Odm) -> odm::Result<()> {
    odm.insert_one(&Publisher {
        id: 1,
        name: "Scribner".into(),
    })
    .await?;
    odm.insert_one(&Author {
        id: 7,
        name: "F. Scott Fitzgerald".into(),
        publisher: Ref::new(1),
    })
    .await?;
    for (id, title, related) in [
        (1, "The Great Gatsby", vec![2]),
        (2, "Tender Is the Night", vec![]),
    ] {
        odm.insert_one(&Book {
            id,
            title: title.into(),
            author: Ref::new(7),
            related: related.into_iter().map(Ref::new).collect(),
        })
        .await?;
    }
    Ok(())
}

#[tokio::test]
async fn populated_references_serialize_as_their_documents_at_any_depth() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    seed(odm).await?;
    // ANCHOR: expanded
    let books: Vec<Book> = odm
        .find(Book::id_field().eq(1))
        .populate(Book::author().populate().then(Author::publisher()))
        .populate(Book::related())
        .await?;
    let json = serde_json::to_value(odm::expanded(&books)).expect("serializable");
    // ANCHOR_END: expanded
    assert_eq!(
        json,
        json!([{
            "_id": 1,
            "title": "The Great Gatsby",
            "author": {
                "_id": 7,
                "name": "F. Scott Fitzgerald",
                "publisher": { "_id": 1, "name": "Scribner" },
            },
            // A populated DBRef too; the related book's own references were not populated,
            // so they are written as stored.
            "related": [{
                "_id": 2,
                "title": "Tender Is the Night",
                "author": 7,
                "related": [],
            }],
        }])
    );
    // Without the wrapper, the same values serialize as stored: ids and DBRefs.
    assert_eq!(
        serde_json::to_value(&books).expect("serializable"),
        json!([{
            "_id": 1,
            "title": "The Great Gatsby",
            "author": 7,
            "related": [{ "$ref": "books", "$id": 2 }],
        }])
    );
    Ok(())
}

#[tokio::test]
async fn a_populated_document_is_stored_with_ids_and_the_flag_ends_with_the_wrapper(
) -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    seed(odm).await?;
    let mut book = odm
        .find_one(Book::id_field().eq(1))
        .populate(Book::author())
        .await?
        .expect("stored");
    assert!(book.author.get().is_some(), "populated");
    book.title = "The Great Gatsby (1925)".into();
    // Serialized for output first, then written: the write is not expanded.
    let _ = serde_json::to_string(&odm::expanded(&book)).expect("serializable");
    odm.replace_one(&book).await?;
    assert_eq!(
        stored_one(&db, "books", 1).await,
        Some(doc! {
            "_id": 1,
            "title": "The Great Gatsby (1925)",
            "author": 7,
            "related": [{ "$ref": "books", "$id": 2 }],
        }),
        "ids stored, not the populated author"
    );
    // A serialization that fails inside the wrapper leaves the flag as it was.
    struct Fails;
    impl Serialize for Fails {
        fn serialize<S: odm::serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(odm::serde::ser::Error::custom("refused"))
        }
    }
    assert!(serde_json::to_string(&odm::expanded(&Fails)).is_err());
    assert_eq!(
        serde_json::to_value(&book).expect("serializable")["author"],
        json!(7)
    );
    Ok(())
}
