use odm::prelude::*;

// A version or a timestamp is kept by odm on each document's own writes, which no cascade
// follows: another model cannot copy it.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[odm(version)]
    version: u64,
    #[odm(updated_at)]
    updated_at: odm::bson::DateTime,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    author: Ref<Author>,
    #[denormalize(from = "Author", via = "author", fields = "version")]
    author_version: u64,
    #[denormalize(from = "Author", via = "author", fields = "updated_at")]
    author_updated_at: odm::bson::DateTime,
}

fn main() {}
