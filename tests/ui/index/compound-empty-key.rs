use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "loans", index(keys = "book, , user"))]
struct Loan {
    #[serde(rename = "_id")]
    id: i32,
    book: i32,
    user: i32,
}

fn main() {}
