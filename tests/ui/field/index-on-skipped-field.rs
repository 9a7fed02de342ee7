use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[index]
    #[serde(skip)]
    cached_rank: i32,
}

fn main() {}
