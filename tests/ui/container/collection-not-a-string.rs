use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = 5)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
