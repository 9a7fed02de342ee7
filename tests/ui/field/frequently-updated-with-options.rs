use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[frequently_updated(often)]
    available: i64,
}

fn main() {}
