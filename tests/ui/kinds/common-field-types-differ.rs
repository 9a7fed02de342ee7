use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SingleBook {
    #[serde(rename = "_id")]
    id: i64,
    volume: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    volume: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", common = "volume")]
#[serde(tag = "type", rename_all = "snake_case")]
enum Book {
    Single(SingleBook),
    Series(SeriesBook),
}

fn main() {}
