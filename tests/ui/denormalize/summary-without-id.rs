use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    qty: i64,
}

#[derive(Embed, Serialize, Deserialize)]
struct PartSummary {
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Part", fields = "name", max = 200)]
    parts: Vec<PartSummary>,
}

fn main() {}
