use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    #[frequently_updated]
    id: i32,
    qty: i64,
}

fn main() {}
