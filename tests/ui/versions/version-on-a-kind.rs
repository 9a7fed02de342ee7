use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "items")]
#[serde(tag = "type")]
enum Item {
    Tool(Tool),
}

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Item", schema_version = 2)]
struct Tool {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
