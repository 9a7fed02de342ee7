use odm::prelude::*;

// A partial index's values are typed by the model's fields: `level` holds a number.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "accounts")]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique, partial(level = "high"))]
    handle: String,
    level: i32,
}

fn main() {}
