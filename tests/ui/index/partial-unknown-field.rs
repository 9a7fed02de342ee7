use odm::prelude::*;

// A partial index selects by the model's own fields.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "accounts")]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique, partial(state = "active"))]
    handle: String,
    status: String,
}

fn main() {}
