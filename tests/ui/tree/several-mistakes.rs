use odm::prelude::*;

// Every mistake is reported at once.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree(parent = "up", on_delete = "orphan", depth = 8))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    #[index]
    ancestors: Vec<Ref<Subject>>,
}

fn main() {}
