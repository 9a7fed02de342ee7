use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree)]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

// A node is moved with `odm.tree::<Subject>().move_under(..)`, which rewrites its subtree too.
fn main() {
    let _ = Subject::parent().set(Ref::new("1920s".to_owned()));
}
