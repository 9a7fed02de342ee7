use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference(many, max = 200)]
    parts: Vec<Ref<Part>>,
}

#[allow(dead_code)]
async fn load(odm: &Odm) -> odm::Result<Vec<Product>> {
    odm.find::<Product>(Product::name().eq("widget"))
        .populate(Product::name())
        .await
}

fn main() {}
