use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "parts", shard_key(keys = "product_name"))]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    product: Ref<Product>,
    #[denormalize(from = "Product", via = "product", fields = "name")]
    product_name: String,
}

fn main() {}
