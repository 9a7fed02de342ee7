use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Stock {
    #[frequently_updated]
    qty: i64,
}

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    stock: Stock,
}

fn main() {}
