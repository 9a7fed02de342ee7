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

#[derive(Embed, Serialize, Deserialize)]
struct Catalog {
    #[denormalize(from = "Part", fields = "name", max = 200)]
    parts: Vec<PartSummary>,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    catalog: Catalog,
}

fn main() {}
