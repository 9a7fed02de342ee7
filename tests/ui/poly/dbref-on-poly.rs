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
    Author(Ref<Author>),
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "feed")]
struct FeedEntry {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(poly)]
    #[serde(with = "odm::dbref")]
    subject: Subject,
}

fn main() {}
