use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "people", schema_version = 2, upgrade = "upgrade_person")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
}

fn upgrade_person(doc: odm::bson::Document) -> odm::bson::Document {
    doc
}

fn main() {}
