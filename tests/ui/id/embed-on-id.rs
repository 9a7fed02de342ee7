use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize, Clone, Debug)]
struct Isbn {
    group: i32,
    item: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    #[embed]
    id: Isbn,
}

fn main() {}
