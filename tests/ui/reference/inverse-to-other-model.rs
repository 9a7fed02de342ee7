use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Team {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 100, inverse = "team")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize)]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    #[parent]
    team: Ref<Team>,
}

fn main() {}
