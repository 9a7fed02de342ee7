use odm::prelude::*;

// A kind is stored in its base's collection: it cannot declare its own soft delete.
#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Item", soft_delete)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    deleted_at: Option<odm::bson::DateTime>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "items")]
#[serde(tag = "type")]
enum Item {
    Book(Book),
}

fn main() {}
