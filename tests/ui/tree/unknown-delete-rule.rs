use odm::prelude::*;

// A node's children cannot be left pointing at nothing.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree(on_delete = "nullify"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

fn main() {}
