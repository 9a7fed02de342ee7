// A copied field with no close name on the source: the message lists the source's fields.
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
    #[reference]
    product: Ref<Product>,
    #[denormalize(from = "Product", via = "product", fields = "title")]
    product_name: String,
}

fn main() {}
