use odm::prelude::*;

#[derive(Model)]
union Book {
    id: i32,
    pages: u32,
}

fn main() {}
