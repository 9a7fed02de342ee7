use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "items")]
#[serde(tag = "type")]
enum Item {
    Subject(Subject),
}

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Item", tree)]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

fn main() {}
