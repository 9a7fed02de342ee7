use odm::prelude::*;

// A root has no parent.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree)]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Ref<Subject>,
    ancestors: Vec<Ref<Subject>>,
}

fn main() {}
