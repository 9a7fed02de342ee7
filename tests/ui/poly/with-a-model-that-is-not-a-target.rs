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
#[odm(collection = "users")]
struct User {
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
    subject: Subject,
}

fn main() {
    let _ = FeedEntry::subject().populate().with::<User>(|p| p);
    let _ = FeedEntry::subject().refers_to_kind::<User>();
}
