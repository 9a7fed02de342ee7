use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "bo\0oks")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
