use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

fn main() {}
