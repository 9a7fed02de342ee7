use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "loans", index)]
struct Loan {
    #[serde(rename = "_id")]
    id: i32,
    book: i32,
}

fn main() {}
