use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    name: String,
    city: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed(max = 1)]
    publisher: Publisher,
}

fn main() {}
