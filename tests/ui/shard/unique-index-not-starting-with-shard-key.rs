use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "products",
    shard_key(keys = "category"),
    index(keys = "name, category", unique)
)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    category: String,
    name: String,
    #[index(unique)]
    catalog_number: i64,
}

fn main() {}
