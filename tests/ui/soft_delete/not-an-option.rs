use odm::prelude::*;

// The field is `None` until the document is deleted.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "notes", soft_delete)]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
    deleted_at: odm::bson::DateTime,
}

fn main() {}
