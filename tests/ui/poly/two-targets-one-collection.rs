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

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Novel {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(PolyRef)]
enum Subject {
    Book(Ref<Book>),
    Novel(Ref<Novel>),
}

fn main() {}
