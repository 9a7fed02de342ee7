use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize, Default)]
struct Publisher {
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    #[serde(skip)]
    publisher: Publisher,
}

fn main() {}
