use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SingleBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    series_title: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
#[serde(tag = "type")]
enum Book {
    #[serde(rename = "book")]
    Single(SingleBook),
    #[serde(rename = "book")]
    Series(SeriesBook),
}

fn main() {}
