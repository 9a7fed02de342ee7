use odm::prelude::*;

#[derive(Serialize, Deserialize)]
struct Details {
    pages: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[serde(flatten)]
    details: Details,
}

fn main() {}
