use odm::prelude::*;

#[derive(Model, Embed, Serialize, Deserialize)]
struct Publisher {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

fn main() {}
