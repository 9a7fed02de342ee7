use odm::prelude::*;

#[derive(PolyRef)]
enum Subject {}

fn main() {}
