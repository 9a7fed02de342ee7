use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Serialize, Deserialize)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Part", fields = "name", max = 20)]
    parts: Vec<PartSummary>,
}

fn main() {}
