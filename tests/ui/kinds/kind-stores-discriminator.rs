use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    #[serde(rename = "type")]
    genre: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
#[serde(tag = "type")]
enum Book {
    Series(SeriesBook),
}

fn main() {}
