use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", collection = "novels")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
