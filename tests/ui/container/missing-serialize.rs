use odm::prelude::*;

#[derive(Model, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
