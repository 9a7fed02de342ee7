use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    author: Ref<Author>,
    editor: Option<odm::Ref<Author>>,
    #[serde(skip)]
    cached: Option<Ref<Author>>,
}

fn main() {}
