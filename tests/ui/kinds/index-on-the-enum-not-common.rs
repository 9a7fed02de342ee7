use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    series_title: String,
}

// An index of the enum covers every kind, so its keys are common fields; a kind's own field is
// indexed on the kind, partial on it.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", common = "title", index(keys = "title, series_title"))]
#[serde(tag = "type")]
enum Book {
    Series(SeriesBook),
}

fn main() {}
