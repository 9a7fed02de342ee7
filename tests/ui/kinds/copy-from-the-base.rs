use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", common = "title")]
#[serde(tag = "type")]
enum Book {
    Series(SeriesBook),
}

// Copies are taken from a kind (`from = "SeriesBook"`), not from the enum of every kind.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    book: Ref<Book>,
    #[denormalize(from = "Book", via = "book", fields = "title")]
    book_title: String,
}

fn main() {}
