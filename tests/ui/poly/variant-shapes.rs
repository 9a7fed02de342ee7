use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(PolyRef)]
enum Subject {
    Book(Ref<Book>),
    Author { author: Ref<Author> },
    Title(String),
    Nothing,
}

fn main() {}
