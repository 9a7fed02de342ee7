//! The seed's books of several kinds in one collection (single-collection inheritance), with a
//! relation of every kind on the kinds' fields.
#![allow(dead_code)]
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "writers")]
pub struct Writer {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
}

/// Every kind of book, stored in `books` with `type: "single" | "series"`.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(
    collection = "books",
    common = "title, writer, pages",
    index(keys = "title", name = "title_every_kind")
)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Book {
    Single(SingleBook),
    Series(SeriesBook),
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Book")]
pub struct SingleBook {
    #[serde(rename = "_id")]
    pub id: i64,
    pub title: String,
    #[reference(on_delete = "restrict")]
    pub writer: Ref<Writer>,
    pub pages: i32,
    #[index(unique)]
    pub isbn: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Book")]
pub struct SeriesBook {
    #[serde(rename = "_id")]
    pub id: i64,
    pub title: String,
    #[reference(on_delete = "restrict")]
    pub writer: Ref<Writer>,
    pub pages: i32,
    #[index]
    pub series_title: String,
    #[index(sparse)]
    pub volume: i32,
    /// A copy into a kind's field, through a reference every kind has.
    #[denormalize(from = "Writer", via = "writer", fields = "name")]
    pub writer_name: String,
    /// The last chapters of the series book, kept by the ODM.
    #[denormalize(
        from = "Chapter",
        via = "book",
        fields = "number, heading",
        latest = 3,
        sort = "-number"
    )]
    #[serde(default)]
    pub last_chapters: Vec<ChapterSummary>,
}

/// A child of a kind, with a copy out of a kind's field.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "chapters")]
pub struct Chapter {
    #[serde(rename = "_id")]
    pub id: i32,
    #[parent(on_delete = "cascade")]
    pub book: Ref<SeriesBook>,
    pub number: i32,
    pub heading: String,
    #[denormalize(from = "SeriesBook", via = "book", fields = "series_title")]
    pub series_title: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ChapterSummary {
    #[serde(rename = "_id")]
    pub id: Ref<Chapter>,
    pub number: i32,
    pub heading: String,
}

/// A reference to any kind: a loan of a book, whatever its kind, with a copy of a field every
/// kind has.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "loans")]
pub struct Loan {
    #[serde(rename = "_id")]
    pub id: i32,
    #[reference(on_delete = "cascade")]
    pub book: Ref<Book>,
    #[denormalize(from = "Book", via = "book", fields = "title")]
    #[serde(default)]
    pub book_title: String,
}

pub fn wizard_chase() -> SeriesBook {
    SeriesBook {
        id: 47,
        title: "The Wizard Chase".into(),
        writer: Ref::new(1),
        pages: 320,
        series_title: "The Wizard's Trilogy".into(),
        volume: 2,
        writer_name: String::new(),
        last_chapters: Vec::new(),
    }
}

pub fn gatsby() -> SingleBook {
    SingleBook {
        id: 1,
        title: "The Great Gatsby".into(),
        writer: Ref::new(2),
        pages: 180,
        isbn: "9781857150193".into(),
    }
}

pub fn writers() -> Vec<Writer> {
    vec![
        Writer {
            id: 1,
            name: "Dave Duncan".into(),
        },
        Writer {
            id: 2,
            name: "F. Scott Fitzgerald".into(),
        },
    ]
}
