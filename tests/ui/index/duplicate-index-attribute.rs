use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique)]
    #[index(desc)]
    isbn: String,
}

fn main() {}
