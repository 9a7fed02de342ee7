// A dotted key into an `#[embed]` field whose type is a model: one error, at the type.
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(index(keys = "author.name"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    author: Author,
}

fn main() {}
