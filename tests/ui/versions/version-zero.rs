use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "people", schema_version = 0)]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
