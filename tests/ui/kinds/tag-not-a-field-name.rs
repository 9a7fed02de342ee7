use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
#[serde(tag = "kind.name")]
enum Book {
    Series(SeriesBook),
}

fn main() {}
