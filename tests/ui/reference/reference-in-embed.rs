use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Embed, Serialize, Deserialize)]
struct Credit {
    role: String,
    #[reference]
    author: Ref<Author>,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed(max = 10)]
    credits: Vec<Credit>,
}

fn main() {}
