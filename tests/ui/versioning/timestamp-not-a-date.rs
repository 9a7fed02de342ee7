use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[odm(created_at)]
    created_at: i64,
    #[odm(updated_at)]
    updated_at: Option<String>,
}

fn main() {}
