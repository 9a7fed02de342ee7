use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree)]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Book>>,
    ancestors: Vec<Ref<Subject>>,
}

fn main() {}
