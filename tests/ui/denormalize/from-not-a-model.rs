use odm::prelude::*;

#[derive(Serialize, Deserialize)]
struct ProductInfo {
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    product: Ref<Product>,
    #[denormalize(from = "ProductInfo", via = "product", fields = "name")]
    product_name: String,
}

fn main() {}
