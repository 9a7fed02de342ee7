use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[index(text)]
    title: String,
    #[index(text)]
    summary: String,
}

fn main() {}
