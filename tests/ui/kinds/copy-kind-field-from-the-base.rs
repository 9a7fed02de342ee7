use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    series_title: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", common = "title")]
#[serde(tag = "type")]
enum Book {
    Series(SeriesBook),
}

// The base offers its common fields to copy; a field of one kind is copied from that kind
// (`from = "SeriesBook"`).
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    book: Ref<Book>,
    #[denormalize(from = "Book", via = "book", fields = "series_title")]
    series_title: String,
}

fn main() {}
