use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Book<T> {
    #[serde(rename = "_id")]
    id: i32,
    extra: T,
}

fn main() {}
