use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(index(keys = "publisher.name"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    publisher: Publisher,
}

fn main() {}
