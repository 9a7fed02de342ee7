use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    product: Ref<Product>,
    #[denormalize(from = "Product", via = "product.id", fields = "name")]
    product_name: String,
}

fn main() {}
