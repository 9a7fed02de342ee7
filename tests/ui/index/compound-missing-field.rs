use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(index(keys = "author, -titel"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    author: i32,
    title: String,
}

fn main() {}
