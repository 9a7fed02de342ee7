use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    author: Author,
}

fn main() {}
