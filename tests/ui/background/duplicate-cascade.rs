use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Embed, Serialize, Deserialize)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Part", fields = "name", max = 20, cascade = "background", cascade = "immediate")]
    parts: Vec<PartSummary>,
}

fn main() {}
