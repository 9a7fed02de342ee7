use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book(i32, String);

fn main() {}
