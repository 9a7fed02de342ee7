use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Supplier {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    supplier: Ref<Supplier>,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 200)]
    parts: Vec<Ref<Part>>,
}

#[allow(dead_code)]
async fn load(odm: &Odm) -> odm::Result<Vec<Product>> {
    odm.find::<Product>(Product::id_field().eq(1))
        .populate(Part::supplier())
        .await
}

fn main() {}
