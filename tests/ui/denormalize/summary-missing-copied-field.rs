// The summary type lacks a copied field that the source has: one error, naming both types.
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
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Part", fields = "name, qty", max = 200)]
    parts: Vec<PartSummary>,
}

fn main() {}
