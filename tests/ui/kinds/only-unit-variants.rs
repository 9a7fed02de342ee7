use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
#[serde(tag = "type")]
enum Book {
    #[serde(other)]
    Other,
}

fn main() {}
