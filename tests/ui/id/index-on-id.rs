use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    #[index(unique)]
    id: i32,
}

fn main() {}
