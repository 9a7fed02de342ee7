use odm::prelude::*;

// A soft delete keeps the time of the delete in `deleted_at`, which the model must declare.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "notes", soft_delete)]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
}

fn main() {}
