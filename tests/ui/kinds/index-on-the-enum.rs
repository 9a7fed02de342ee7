use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

// An index of the enum would cover every kind; each kind declares its own, partial on the kind.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", common = "title", index(keys = "title"))]
#[serde(tag = "type")]
enum Book {
    Series(SeriesBook),
}

fn main() {}
