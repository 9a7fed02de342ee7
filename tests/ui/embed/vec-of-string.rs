use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    subjects: Vec<String>,
}

fn main() {}
