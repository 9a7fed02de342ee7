use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    name: String,
}

#[derive(Embed, Serialize, Deserialize)]
struct Review {
    stars: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    publisher: Publisher,
    reviews: Vec<Review>,
}

fn main() {}
