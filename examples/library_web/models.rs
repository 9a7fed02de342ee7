//! The library's books, their authors and the loans that hold them, as the web service stores
//! them: a book refers to its author and is versioned; its ISBN's format is checked by the
//! collection's validator; a loan refers to a book, which cannot be deleted while it is lent.

use odm::bson::doc;
use odm::prelude::*;
use odm::validator::{BsonSchema, Schema};

// ANCHOR: models
/// Stored in `authors`.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "authors")]
pub struct Author {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
}

/// Stored in `books`, listed by title a page at a time (the index on `title, _id` serves
/// every page). The `_id` is the book's slug, chosen by the client that creates it.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "books", index(keys = "title, id"))]
pub struct Book {
    #[serde(rename = "_id")]
    pub id: String,
    pub title: String,
    #[index(unique)]
    pub isbn: Isbn,
    pub pages: i32,
    /// `restrict` (the default): an author with books cannot be deleted.
    #[reference]
    pub author: Ref<Author>,
    /// Kept by odm: 0 on insert, one more on every write; a save from a stale copy is refused.
    #[odm(version)]
    pub version: u64,
}

/// Stored in `loans`. While a loan refers to a book, the book cannot be deleted (`restrict`).
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "loans")]
pub struct Loan {
    #[serde(rename = "_id")]
    pub id: Option<ObjectId>,
    #[reference]
    pub book: Ref<Book>,
    pub patron: String,
}
// ANCHOR_END: models

// ANCHOR: isbn
/// An ISBN-13: stored as a string of 13 digits. The Rust type takes any string; the format is
/// declared here, once, and the collection's validator holds every writer to it (this service,
/// other programs, the shell).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Isbn(pub String);

impl BsonSchema for Isbn {
    const SCHEMA: Schema =
        Schema::Custom(|| doc! { "bsonType": "string", "pattern": "^[0-9]{13}$" });
}
// ANCHOR_END: isbn

/// The workshop's authors.
pub fn authors() -> Vec<Author> {
    [
        (1, "F. Scott Fitzgerald"),
        (2, "Arthur Miller"),
        (3, "Virginia Woolf"),
    ]
    .into_iter()
    .map(|(id, name)| Author {
        id,
        name: name.into(),
    })
    .collect()
}

/// Five books by the authors of [`authors`].
pub fn books() -> Vec<Book> {
    [
        (
            "the-great-gatsby",
            "The Great Gatsby",
            "9781857150193",
            176,
            1,
        ),
        (
            "this-side-of-paradise",
            "This Side of Paradise",
            "9780679447238",
            352,
            1,
        ),
        (
            "death-of-a-salesman",
            "Death of a Salesman",
            "9780141182636",
            112,
            2,
        ),
        ("mrs-dalloway", "Mrs Dalloway", "9780141182490", 194, 3),
        ("orlando", "Orlando", "9780141184272", 256, 3),
    ]
    .into_iter()
    .map(|(id, title, isbn, pages, author)| Book {
        id: id.into(),
        title: title.into(),
        isbn: Isbn(isbn.into()),
        pages,
        author: Ref::new(author),
        version: 0,
    })
    .collect()
}

/// Installs the indexes and validators the models declare, then the authors and books.
pub async fn prepare(odm: &Odm) -> odm::Result<()> {
    odm.sync_indexes().await?;
    odm.sync_validators().await?;
    odm.insert_many(&authors()).await?;
    odm.insert_many(&books()).await?;
    Ok(())
}
