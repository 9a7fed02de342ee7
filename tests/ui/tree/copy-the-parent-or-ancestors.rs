use odm::prelude::*;

// A move rewrites a subtree's parent and ancestors in one update that no cascade follows: a
// copy of them would go stale.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "subjects", tree)]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    subject: Ref<Subject>,
    #[denormalize(from = "Subject", via = "subject", fields = "parent")]
    subject_parent: Option<String>,
}

#[derive(Embed, Serialize, Deserialize)]
struct SubjectSummary {
    id: Ref<Subject>,
    name: String,
    ancestors: Vec<String>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Subject", fields = "name, ancestors", max = 20)]
    subjects: Vec<SubjectSummary>,
}

fn main() {}
