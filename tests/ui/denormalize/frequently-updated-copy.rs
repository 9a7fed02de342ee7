// Copying a field marked `#[frequently_updated]` is a warning (rule of thumb 5); this file
// denies it to show the message. `#[allow(deprecated)]` on the copying struct accepts it.
#![deny(deprecated)]

use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[frequently_updated]
    qty: i64,
}

#[derive(Embed, Serialize, Deserialize)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
    qty: i64,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Part", fields = "name, qty", max = 200)]
    parts: Vec<PartSummary>,
}

fn main() {}
