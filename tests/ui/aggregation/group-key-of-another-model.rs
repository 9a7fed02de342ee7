use odm::aggregate::{count, sum};
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    quantity: i32,
    #[reference]
    product: Ref<Product>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: i32,
    stars: i32,
    #[reference]
    product: Ref<Product>,
}

#[derive(Deserialize)]
struct PerProduct {
    #[serde(rename = "_id")]
    product: Ref<Product>,
    parts: i64,
    stock: i64,
}

// The key is a field of reviews, but the pipeline reads parts.
#[allow(dead_code)]
async fn per_product(odm: &Odm) -> odm::Result<Vec<PerProduct>> {
    odm.aggregate::<Part>()
        .group(odm::group!(PerProduct { by product: Review::product(), parts: count(), stock: sum(Part::quantity()) }))
        .await
}

fn main() {}
