use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(index(keys = "author, title", name = "by_title"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    author: i32,
    #[index(name = "by_title")]
    title: String,
}

fn main() {}
