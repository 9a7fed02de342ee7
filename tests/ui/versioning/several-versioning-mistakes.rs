// Every mistake is reported in one compilation: an unknown key, a value given, a field that
// is two kept fields, the id as a version, an embedded type's field.
use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Stamp {
    #[odm(updated_at)]
    at: odm::bson::DateTime,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    #[odm(version)]
    id: i64,
    #[odm(versoin)]
    a: u64,
    #[odm(created_at = "now")]
    b: odm::bson::DateTime,
    #[odm(created_at, updated_at)]
    c: odm::bson::DateTime,
}

fn main() {}
