use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree, shard_key(keys = "parent"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

fn main() {}
