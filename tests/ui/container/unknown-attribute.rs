use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(colection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
