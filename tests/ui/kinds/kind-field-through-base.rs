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
#[odm(collection = "books", common = "title")]
#[serde(tag = "type", rename_all = "snake_case")]
enum Book {
    Single(SingleBook),
    Series(SeriesBook),
}

fn main() {
    // Only series books have a series title: query it on the kind, `SeriesBook::series_title()`.
    let _ = Book::series_title().eq("The Wizard's Trilogy");
}
