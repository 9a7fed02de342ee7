use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    tasks: Vec<i32>,
}

#[derive(Model, Serialize, Deserialize)]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    #[parent(inverse = "tasks")]
    owner: Ref<Person>,
}

fn main() {}
