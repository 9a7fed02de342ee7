use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Review {
    user: i32,
    text: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    pages: i32,
    subtitle: Option<String>,
    #[embed(max = 10)]
    reviews: Vec<Review>,
}

fn main() {
    let _ = Book::title().inc(1);
}
