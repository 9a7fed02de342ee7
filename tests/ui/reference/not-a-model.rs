use odm::prelude::*;

#[derive(Serialize, Deserialize)]
struct Author {
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    author: Ref<Author>,
}

fn main() {}
