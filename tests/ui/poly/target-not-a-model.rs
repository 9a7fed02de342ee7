use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    name: String,
}

#[derive(PolyRef)]
enum Subject {
    Book(Ref<Book>),
    Name(Ref<String>),
    Publisher(Ref<Publisher>),
}

fn main() {}
