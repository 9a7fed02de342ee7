use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[odm(index)]
    title: String,
}

fn main() {}
