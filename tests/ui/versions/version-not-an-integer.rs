use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "people", schema_version = "2")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
