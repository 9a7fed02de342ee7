use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "people")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 10, inverse = "owner")]
    #[serde(with = "odm::dbref")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "tasks")]
struct Task {
    #[serde(rename = "_id")]
    id: i32,
    #[parent(inverse = "tasks")]
    owner: Ref<Person>,
}

fn main() {}
