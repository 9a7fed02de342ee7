use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book", collection = "series")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
#[serde(tag = "type")]
enum Book {
    Series(SeriesBook),
}

fn main() {}
