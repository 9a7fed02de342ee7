use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[serde(rename = "_id")]
    isbn: String,
}

fn main() {}
