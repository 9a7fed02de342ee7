use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book {
    id: i32,
    title: String,
}

fn main() {}
