use odm::prelude::*;

// `forever` goes with `unique`, on a model with soft deletes; a sparse unique index of such a
// model would leave its live documents out.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "accounts", soft_delete, index(keys = "team, handle", unique, sparse))]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
    #[index(forever)]
    email: String,
    #[index(unique, sparse)]
    phone: String,
    team: String,
    handle: String,
    deleted_at: Option<odm::bson::DateTime>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique, forever)]
    isbn: String,
}

fn main() {}
