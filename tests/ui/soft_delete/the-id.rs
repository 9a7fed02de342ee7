use odm::prelude::*;

// The field holding the time of the delete is a field of its own, not `_id`.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "notes", soft_delete = "id")]
struct Note {
    #[serde(rename = "_id")]
    id: Option<odm::bson::DateTime>,
    text: String,
}

fn main() {}
