use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books", common = "title")]
struct Book {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

fn main() {}
