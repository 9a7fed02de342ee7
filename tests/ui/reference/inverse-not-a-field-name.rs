use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 100, inverse = "Task.owner")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize)]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    #[parent(inverse = "tasks")]
    owner: Ref<Person>,
}

fn main() {}
