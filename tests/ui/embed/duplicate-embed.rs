use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    #[embed]
    publisher: Publisher,
}

fn main() {}
