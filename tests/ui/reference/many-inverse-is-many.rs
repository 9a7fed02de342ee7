use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 100, inverse = "owners")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize)]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 10)]
    owners: Vec<Ref<Person>>,
}

fn main() {}
