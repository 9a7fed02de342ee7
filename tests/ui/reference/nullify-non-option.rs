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
    #[reference(on_delete = "nullify")]
    supplier: Ref<Supplier>,
}

fn main() {}
