use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Review {
    user: i32,
    text: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed(max = 500)]
    reviews: Vec<Review>,
}

fn main() {}
