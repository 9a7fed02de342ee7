use odm::prelude::*;

// `soft_delete` is given once, and names a field.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "notes", soft_delete, soft_delete)]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    deleted_at: Option<odm::bson::DateTime>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "memos", soft_delete = "deleted at")]
struct Memo {
    #[serde(rename = "_id")]
    id: i32,
    deleted_at: Option<odm::bson::DateTime>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "drafts", soft_delete = 1)]
struct Draft {
    #[serde(rename = "_id")]
    id: i32,
    deleted_at: Option<odm::bson::DateTime>,
}

fn main() {}
