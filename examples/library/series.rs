//! Series books (the workshop's single-collection inheritance): books of two kinds in one
//! collection, told apart by their `type`. Part of the library example, whose steps it
//! continues.
//!
//! The library's `Book` of the earlier steps stays as it is; the books of several kinds live in
//! a collection of their own, `catalog`.

use odm::bson::{doc, Bson, Document};
use odm::prelude::*;

use crate::common::{list, say, say_lines, Steps};
use crate::{author, Author};

// ANCHOR: kinds
/// Every book of the catalog, whatever its kind: one collection, where each document says
/// its kind in `type`.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "catalog",
    common = "title, author, pages",
    index(keys = "title", name = "title_every_kind")
)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnyBook {
    Single(SingleBook),
    Series(SeriesBook),
}
// ANCHOR_END: kinds

// ANCHOR: single
/// A book on its own: `type: "single"`.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(kind_of = "AnyBook")]
struct SingleBook {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference(on_delete = "restrict")]
    author: Ref<Author>,
    pages: i32,
    /// Unique among single books.
    #[index(unique)]
    isbn: String,
}
// ANCHOR_END: single

// ANCHOR: series
/// A book of a series: `type: "series"`, with the fields only series books have.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(kind_of = "AnyBook")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference(on_delete = "restrict")]
    author: Ref<Author>,
    pages: i32,
    #[index]
    series_title: String,
    /// A companion book of a series has no volume number, and stores no `volume`.
    #[index(sparse)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    volume: Option<i32>,
    /// The author's last name, kept by the ODM on series books only.
    #[denormalize(from = "Author", via = "author", fields = "last_name")]
    author_name: String,
}
// ANCHOR_END: series

// ANCHOR: shelf
/// A display shelf of the library: books of any kind.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: String,
    #[reference(many, max = 20, on_delete = "pull")]
    books: Vec<Ref<AnyBook>>,
}
// ANCHOR_END: shelf

/// The steps of the series books, after the library's own.
pub async fn run(odm: &Odm, steps: &Steps) -> odm::Result<()> {
    steps.start("Series books: insert books of two kinds into one collection");
    // ANCHOR: insert_kinds
    odm.insert_one(&author(3, "Moira", "Quill")).await?;
    // A kind's own insert stores its discriminator.
    odm.insert_one(&wizard_chase()).await?;
    // The base inserts books of any kind.
    let more = [
        AnyBook::Series(wizard_hunt()),
        AnyBook::Series(companion()),
        AnyBook::Single(crucible()),
    ];
    odm.insert_many(&more).await?;
    // ANCHOR_END: insert_kinds
    say("1 series book through its kind, 3 books through the base");
    steps.sent();

    steps.start("Read two of them back with the driver: what is stored");
    let raw = odm.database().collection::<Document>("catalog");
    for id in [47, 5] {
        if let Some(stored) = raw.find_one(doc! { "_id": id }).await? {
            say(steps.show(&Bson::Document(stored)));
        }
    }
    steps.sent();

    steps.start("Find the series books: a kind's queries select its documents");
    // ANCHOR: find_kind
    // db.books.find({ type: "series" })
    let series: Vec<SeriesBook> = odm.find(Filter::all()).await?;
    // db.books.find({ series_title: { $exists: true } })
    let in_a_series = odm.find(SeriesBook::series_title().exists(true)).await?;
    // db.books.find({ volume: { $gt: 0 } })
    let numbered = odm
        .find(SeriesBook::volume().gt(Some(0)))
        .sort(SeriesBook::volume().asc())
        .await?;
    let single_books = odm.count(Filter::<SingleBook>::all()).await?;
    // ANCHOR_END: find_kind
    list("series books", series.iter().map(|b| &b.title));
    say(format_args!("in a series: {}", in_a_series.len()));
    list("numbered volumes", numbered.iter().map(|b| &b.title));
    say(format_args!("single books: {single_books}"));
    steps.sent();

    steps.start("Query every kind at once through the common fields");
    // ANCHOR: find_common
    let long: Vec<AnyBook> = odm
        .find(AnyBook::pages().gte(200))
        .sort(AnyBook::title().asc())
        .populate(AnyBook::author())
        .await?;
    let by_moira = odm.count(AnyBook::author().eq(Ref::new(3))).await?;
    let every_book = odm.count(Filter::<AnyBook>::all()).await?;
    // ANCHOR_END: find_common
    let long: Vec<String> = long
        .iter()
        .map(|b| {
            let author = match b {
                AnyBook::Single(s) => s.author.loaded()?,
                AnyBook::Series(s) => s.author.loaded()?,
            };
            Ok(format!("{}, by {}", describe(b), author.last_name))
        })
        .collect::<odm::Result<_>>()?;
    list("200 pages or more", long);
    say(format_args!(
        "books by author 3: {by_moira}; books of every kind: {every_book}"
    ));
    steps.sent();

    steps.start("The kinds' indexes, as listIndexes reports them");
    let reply = odm
        .database()
        .run_command(doc! { "listIndexes": "catalog" })
        .await?;
    let listed = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("listIndexes replies with a cursor");
    for index in listed {
        if let Some(index) = index.as_document() {
            let mut shown = index.clone();
            shown.remove("v");
            say(steps.show(&Bson::Document(shown)));
        }
    }
    steps.sent();

    steps.start("Relations: a kind's reference, and a shelf of books of any kind");
    // ANCHOR: relations
    let trilogy = odm
        .find(SeriesBook::series_title().eq("The Wizard's Trilogy"))
        .sort(SeriesBook::title().asc())
        .populate(SeriesBook::author())
        .await?;
    let shelf = Shelf {
        id: "new-arrivals".into(),
        books: vec![Ref::new(47), Ref::new(5)],
    };
    odm.insert_one(&shelf).await?;
    let shelf = odm
        .find_one(Shelf::id_field().eq("new-arrivals"))
        .populate(Shelf::books())
        .await?
        .expect("inserted above");
    // ANCHOR_END: relations
    for book in &trilogy {
        let author = book.author.loaded()?;
        say(format_args!(
            "{} by {} {}",
            book.title, author.first_name, author.last_name
        ));
    }
    let on_shelf: Vec<String> = shelf
        .books
        .iter()
        .map(|b| b.loaded().map(describe))
        .collect::<Result<_, _>>()?;
    list("on the new-arrivals shelf", on_shelf);
    steps.sent();

    steps.start("Rename an author: the copy lives on series books only");
    // ANCHOR: copy_into_kind
    odm.update_by_id::<Author>(3, Author::last_name().set("Quill-Hart"))
        .await?;
    let wizard = odm.get::<SeriesBook>(47).await?.expect("inserted above");
    // ANCHOR_END: copy_into_kind
    say(format_args!(
        "{} now copies the name {}",
        wizard.title, wizard.author_name
    ));
    steps.sent();

    steps.start("Delete a series book: the shelf lets go of it");
    // ANCHOR: delete_kind
    let deleted = odm.delete_one(SeriesBook::id_field().eq(47)).await?;
    // ANCHOR_END: delete_kind
    say(format_args!("deleted: {deleted}"));
    steps.sent();

    steps.start("A document of a kind this program does not know");
    // ANCHOR: unknown_kind
    // Another program stores e-books in the same collection.
    raw.insert_one(doc! { "_id": 90, "type": "ebook", "title": "The Wizard Chase", "pages": 1 })
        .await?;
    let err = odm
        .find::<AnyBook>(Filter::all())
        .await
        .expect_err("no kind of AnyBook is an e-book");
    assert!(matches!(err, odm::Error::UnknownKind { .. }));
    // A kind's own queries never see it.
    let series = odm.count(Filter::<SeriesBook>::all()).await?;
    // ANCHOR_END: unknown_kind
    say_lines(format_args!("refused: {err}"));
    say(format_args!("series books still found: {series}"));
    steps.sent();
    Ok(())
}

/// `title (kind)`.
fn describe(book: &AnyBook) -> String {
    match book {
        AnyBook::Single(b) => format!("{} (single)", b.title),
        AnyBook::Series(b) => format!("{} (series)", b.title),
    }
}

fn series_book(id: i32, title: &str, pages: i32, volume: Option<i32>) -> SeriesBook {
    SeriesBook {
        id,
        title: title.into(),
        author: Ref::new(3),
        pages,
        series_title: "The Wizard's Trilogy".into(),
        volume,
        // Filled by the ODM from the author.
        author_name: String::new(),
    }
}

/// The workshop's `db.books.findOne()`.
fn wizard_chase() -> SeriesBook {
    series_book(47, "The Wizard Chase", 320, Some(2))
}

fn wizard_hunt() -> SeriesBook {
    series_book(46, "The Wizard Hunt", 288, Some(1))
}

fn companion() -> SeriesBook {
    series_book(48, "A Wizard's Companion", 96, None)
}

fn crucible() -> SingleBook {
    SingleBook {
        id: 5,
        title: "The Crucible".into(),
        author: Ref::new(2),
        pages: 143,
        isbn: "9780141182551".into(),
    }
}
