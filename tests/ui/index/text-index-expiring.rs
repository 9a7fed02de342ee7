use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[index(text, expire_after_secs = 3600)]
    title: String,
}

fn main() {}
