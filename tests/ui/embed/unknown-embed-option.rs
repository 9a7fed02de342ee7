use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Review {
    user: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[embed(mx = 3)]
    reviews: Vec<Review>,
}

fn main() {}
