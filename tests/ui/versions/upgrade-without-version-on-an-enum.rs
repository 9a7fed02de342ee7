use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "items", upgrade = "upgrade_item")]
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

fn upgrade_item(_from: u32, _doc: &mut odm::bson::Document) -> Result<(), String> {
    Ok(())
}

fn main() {}
