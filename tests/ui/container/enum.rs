use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
enum Book {
    Novel { id: i32 },
    Poem { id: i32 },
}

fn main() {}
