use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[odm(version)]
    version: u64,
    #[odm(version)]
    revision: u64,
}

fn main() {}
