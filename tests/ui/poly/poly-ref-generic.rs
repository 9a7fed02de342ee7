use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(PolyRef)]
enum Subject<T> {
    Book(Ref<Book>),
    Any(T),
}

fn main() {}
