//! Many-to-many with an array of ids on one side (the workshop's co-authors): a book lists its
//! authors; an author lists nothing. Shown in the guide's "Relationships" chapter.

use odm::prelude::*;
use odm::testing::TestDb;

// ANCHOR: models
/// Stored in `authors`: the author knows nothing of its books.
#[derive(Model, Serialize, Deserialize, Debug)]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    first_name: String,
    last_name: String,
}

/// Stored in `books`: `authors: [1, 5]`, a handful of ids. Deleting an author pulls it.
#[derive(Model, Serialize, Deserialize, Debug)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference(many, max = 20, on_delete = "pull")]
    authors: Vec<Ref<Author>>,
}
// ANCHOR_END: models

async fn library(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    odm.sync_indexes().await?;
    odm.insert_many([
        &author(1, "F. Scott", "Fitzgerald"),
        &author(5, "Unknown", "Co-author"),
    ])
    .await?;
    odm.insert_many([
        &book(1, "The Great Gatsby", &[1, 5]),
        &book(3, "This Side of Paradise", &[1]),
    ])
    .await?;
    db.commands().clear();
    Ok(())
}

// ANCHOR: queries
#[tokio::test]
async fn the_authors_of_a_book_and_the_books_of_an_author() -> odm::Result<()> {
    let db = TestDb::new().await?;
    library(&db).await?;
    let odm = db.odm();

    // All authors of a book: the book, then `{_id: {$in: [1, 5]}}` on authors.
    let gatsby = odm
        .get::<Book>(1)
        .populate(Book::authors())
        .await?
        .expect("inserted");
    let mut names = Vec::new();
    for author in &gatsby.authors {
        names.push(author.loaded()?.last_name.as_str());
    }
    assert_eq!(names, ["Fitzgerald", "Co-author"]);

    // All books by an author: `{authors: 1}`, served by the index `authors_1`.
    let by_fitzgerald = odm
        .find(Book::authors().refers_to(1))
        .sort(Book::id().asc())
        .await?;
    assert_eq!(by_fitzgerald.len(), 2);

    // The book with its authors: one `aggregate` with a `$lookup` (the plan `Plan::Auto` takes
    // for one document), or a `find` and a `$in` find of the authors under `Plan::In`; then
    // one `find` of the books.
    let sent = db.commands().names();
    assert!(
        sent == ["aggregate", "find"] || sent == ["find", "find", "find"],
        "{sent:?}"
    );
    Ok(())
}
// ANCHOR_END: queries

// ANCHOR: delete
#[tokio::test]
async fn deleting_an_author_pulls_it_from_the_books() -> odm::Result<()> {
    let db = TestDb::new().await?;
    library(&db).await?;
    let odm = db.odm();

    odm.delete_one(Author::id().eq(5)).await?;

    let gatsby = odm.get::<Book>(1).await?.expect("inserted");
    assert_eq!(gatsby.authors, [Ref::new(1)]);
    Ok(())
}
// ANCHOR_END: delete

fn author(id: i32, first_name: &str, last_name: &str) -> Author {
    Author {
        id,
        first_name: first_name.into(),
        last_name: last_name.into(),
    }
}

fn book(id: i32, title: &str, authors: &[i32]) -> Book {
    Book {
        id,
        title: title.into(),
        authors: authors.iter().map(|&a| Ref::new(a)).collect(),
    }
}
