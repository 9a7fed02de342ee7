use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many)]
    parts: Vec<Ref<Part>>,
}

fn main() {}
