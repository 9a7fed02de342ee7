use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "people", upgrade = "upgrade_person")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
}

fn upgrade_person(_from: u32, _doc: &mut odm::bson::Document) -> Result<(), String> {
    Ok(())
}

fn main() {}
