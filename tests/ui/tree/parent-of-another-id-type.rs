use odm::prelude::*;

// The parent holds an `i32`, but a subject's id is a `String`.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree)]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<i32>,
    ancestors: Vec<String>,
}

fn main() {}
