use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    catalog_number: i64,
}

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    product_id: i32,
    #[denormalize(from = "Product", via = "product_id", fields = "name")]
    product_name: String,
}

fn main() {}
