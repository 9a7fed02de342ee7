use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(PolyRef)]
enum About {
    Book(Ref<Book>),
    Other(DbRef),
    Elsewhere(DbRef),
}

fn main() {}
