use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    catalog_number: i64,
}

#[derive(Model, Serialize, Deserialize)]
struct Supplier {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    supplier: Ref<Supplier>,
    #[denormalize(from = "Product", via = "supplier", fields = "name")]
    product_name: String,
}

fn main() {}
