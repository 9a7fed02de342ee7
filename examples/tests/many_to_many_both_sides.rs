//! Many-to-many with arrays of ids on both sides (the workshop's co-authors): a book lists its
//! authors and an author lists their books. Shown in the guide's "Relationships" chapter.

use odm::prelude::*;
use odm::testing::TestDb;

// ANCHOR: models
/// `books: [1, 3, 20]`: an author writes a few hundred books at most.
#[derive(Model, Serialize, Deserialize, Debug)]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    first_name: String,
    last_name: String,
    #[reference(many, max = 500, on_delete = "pull")]
    books: Vec<Ref<Book>>,
}

/// `authors: [1, 5]`.
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
    odm.insert_many([
        &author(1, "F. Scott", "Fitzgerald", &[1, 3]),
        &author(5, "Unknown", "Co-author", &[1]),
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
async fn each_side_reads_the_other_with_one_command() -> odm::Result<()> {
    let db = TestDb::new().await?;
    library(&db).await?;
    let odm = db.odm();

    // All books by an author, from the author's own list.
    let fitzgerald = odm
        .get::<Author>(1)
        .populate(Author::books())
        .await?
        .expect("inserted");
    assert_eq!(fitzgerald.books.len(), 2);

    // All authors of a book, without reading the book: `{books: 1}`.
    let authors = odm.find(Author::books().refers_to(1)).await?;
    assert_eq!(authors.len(), 2);

    // The author with their books: one `aggregate` with a `$lookup` (the plan `Plan::Auto`
    // takes for one document), or a `find` and a `$in` find of the books under `Plan::In`;
    // then one `find` of the authors.
    let names = db.commands().names();
    assert!(
        names == ["aggregate", "find"] || names == ["find", "find", "find"],
        "{names:?}"
    );
    Ok(())
}
// ANCHOR_END: queries

// ANCHOR: add_author
#[tokio::test]
async fn adding_a_co_author_writes_both_sides_in_one_transaction() -> odm::Result<()> {
    let db = TestDb::new().await?;
    if !db.odm().supports_transactions().await? {
        eprintln!("skipped: a standalone server has no transactions");
        return Ok(());
    }
    library(&db).await?;
    let odm = db.odm();

    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    odm.update_by_id::<Book>(3, Book::authors().add_to_set(Ref::new(5)))
        .session(&mut session)
        .await?;
    odm.update_by_id::<Author>(5, Author::books().add_to_set(Ref::new(3)))
        .session(&mut session)
        .await?;
    session.commit_transaction().await?;

    let co_author = odm.get::<Author>(5).await?.expect("inserted");
    assert_eq!(co_author.books, [Ref::new(1), Ref::new(3)]);
    Ok(())
}
// ANCHOR_END: add_author

// ANCHOR: delete
#[tokio::test]
async fn deleting_a_book_pulls_it_from_its_authors() -> odm::Result<()> {
    let db = TestDb::new().await?;
    library(&db).await?;
    let odm = db.odm();

    odm.delete_one(Book::id().eq(1)).await?;

    let fitzgerald = odm.get::<Author>(1).await?.expect("inserted");
    assert_eq!(fitzgerald.books, [Ref::new(3)]);
    let co_author = odm.get::<Author>(5).await?.expect("inserted");
    assert!(co_author.books.is_empty());
    Ok(())
}
// ANCHOR_END: delete

fn author(id: i32, first_name: &str, last_name: &str, books: &[i32]) -> Author {
    Author {
        id,
        first_name: first_name.into(),
        last_name: last_name.into(),
        books: books.iter().map(|&b| Ref::new(b)).collect(),
    }
}

fn book(id: i32, title: &str, authors: &[i32]) -> Book {
    Book {
        id,
        title: title.into(),
        authors: authors.iter().map(|&a| Ref::new(a)).collect(),
    }
}
