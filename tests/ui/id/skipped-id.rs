use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id", skip)]
    id: i32,
    title: String,
}

fn main() {}
