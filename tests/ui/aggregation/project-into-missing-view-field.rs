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

#[derive(Deserialize)]
struct Line {
    name: String,
}

// `Line` has no field `title`.
#[allow(dead_code)]
async fn lines(odm: &Odm) -> odm::Result<Vec<Line>> {
    odm.aggregate::<Part>()
        .project(odm::project!(Line { title: Part::name() }))
        .await
}

fn main() {}
