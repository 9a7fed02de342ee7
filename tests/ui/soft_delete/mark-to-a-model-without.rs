use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
}

// An author is never soft-deleted: there is no soft delete to mark a draft with.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "drafts", soft_delete)]
struct Draft {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_soft_delete = "mark")]
    author: Ref<Author>,
    deleted_at: Option<odm::bson::DateTime>,
}

fn main() {}
