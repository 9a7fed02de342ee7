use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade", on_delete = "restrict")]
    author: Ref<Author>,
}

fn main() {}
