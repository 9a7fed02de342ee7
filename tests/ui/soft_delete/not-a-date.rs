use odm::prelude::*;

// The field holds the time of the delete: a BSON date.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "notes", soft_delete)]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
    deleted_at: Option<String>,
}

fn main() {}
