use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(index(keys = "title, -summary", text))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    summary: String,
}

fn main() {}
