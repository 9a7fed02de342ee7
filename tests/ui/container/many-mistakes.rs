// Every mistake in the input is reported in one compilation, not one at a time.
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(colection = "books", collection = "")]
#[odm(index(keys = "titel", uniqe))]
struct Book {
    #[serde(rename = "_id")]
    #[index]
    id: i32,
    #[index(unique, text)]
    title: String,
    #[odm(skip)]
    isbn: String,
}

fn main() {}
