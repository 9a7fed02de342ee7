use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Book")]
struct SingleBook {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "books",
    bucket(key = "user", period = "month", every = "month", items = "reviews", time = "created_at")
)]
#[serde(tag = "type")]
enum Book {
    Single(SingleBook),
}

fn main() {}
