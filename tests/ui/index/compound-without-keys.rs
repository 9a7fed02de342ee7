use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(index(unique))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
}

fn main() {}
