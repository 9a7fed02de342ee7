use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", index(keys = "title, cache"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[serde(skip)]
    cache: String,
}

fn main() {}
