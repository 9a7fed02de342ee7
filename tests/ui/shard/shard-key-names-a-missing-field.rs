use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "products", shard_key(keys = "categry"))]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    category: String,
}

fn main() {}
