use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", common = "title, title, 2nd")]
#[serde(tag = "type")]
enum Book {
    Series(SeriesBook),
}

fn main() {}
