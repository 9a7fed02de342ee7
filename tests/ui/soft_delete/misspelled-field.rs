use odm::prelude::*;

// The field named by `soft_delete = "..."` must exist: a near name is suggested.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "notes", soft_delete = "removed_at")]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
    removed_on: Option<odm::bson::DateTime>,
}

fn main() {}
