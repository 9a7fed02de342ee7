// A misspelt `inverse`: the closest field of the referenced model is suggested.
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 100, inverse = "asignee")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize)]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    #[parent(inverse = "tasks")]
    assignee: Ref<Person>,
}

fn main() {}
