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
    #[denormalize(from = "Product", via = "product", fields = "name")]
    product_name: String,
}

fn main() {
    // Queries on a copy are fine; writing it is odm's job.
    let _ = Part::product_name().eq("shifter");
    let _ = Part::product_name().set("hand-made");
}
