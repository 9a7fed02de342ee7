use odm::prelude::*;

// A kind is read and written in its base's collection: its defaults are the base's.
#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Item", write_concern = "majority")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "items")]
#[serde(tag = "type")]
enum Item {
    Book(Book),
}

fn main() {}
