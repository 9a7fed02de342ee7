use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(index(keys = "title, publisher.1st"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[embed]
    publisher: Publisher,
}

fn main() {}
