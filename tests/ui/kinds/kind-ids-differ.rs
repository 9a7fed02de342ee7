use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SingleBook {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: ObjectId,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
#[serde(tag = "type")]
enum Book {
    Single(SingleBook),
    Series(SeriesBook),
}

fn main() {}
