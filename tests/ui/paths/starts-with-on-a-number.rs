use odm::prelude::*;

// A prefix is a string's: a number field has no `starts_with`.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    pages: i32,
}

fn main() {
    let _ = Book::pages().starts_with("1");
}
