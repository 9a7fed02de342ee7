use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "items", schema_version = 2)]
#[serde(tag = "type")]
enum Item {
    Tool(Tool),
}

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Item")]
struct Tool {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
