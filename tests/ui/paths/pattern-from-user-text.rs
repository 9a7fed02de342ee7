use odm::prelude::*;
use odm::Pattern;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
}

// A pattern is the program's: text read at run time cannot become one.
fn search(typed: String) -> Filter<Book> {
    Book::title().matches(&Pattern::new(&typed))
}

fn main() {
    let _ = search(String::new());
}
