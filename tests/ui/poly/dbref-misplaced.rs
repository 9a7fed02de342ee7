use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "chapters")]
struct Chapter {
    #[serde(rename = "_id")]
    id: i32,
    #[parent]
    #[serde(with = "odm::dbref")]
    book: Ref<Book>,
    #[serde(with = "odm::dbref")]
    title: String,
}

fn main() {}
