use odm::prelude::*;

// A text index compares words by its language; the server refuses a collation on it.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "articles")]
struct Article {
    #[serde(rename = "_id")]
    id: i32,
    #[index(text, collation(locale = "en", strength = 2))]
    body: String,
}

fn main() {}
