use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "posts", soft_delete)]
struct Post {
    #[serde(rename = "_id")]
    id: i32,
    deleted_at: Option<odm::bson::DateTime>,
}

// Marking a comment with its post needs soft deletes on the comment.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_soft_delete = "mark")]
    post: Ref<Post>,
}

// A rule that is neither `mark` nor `leave`.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "drafts", soft_delete)]
struct Draft {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_soft_delete = "cascade")]
    post: Ref<Post>,
    deleted_at: Option<odm::bson::DateTime>,
}

fn main() {}
