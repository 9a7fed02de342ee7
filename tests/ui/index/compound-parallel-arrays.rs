use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Review {
    user: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(index(keys = "subjects, reviews.user"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    subjects: Vec<String>,
    #[embed(max = 10)]
    reviews: Vec<Review>,
}

fn main() {}
