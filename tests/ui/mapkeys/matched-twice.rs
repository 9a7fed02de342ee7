use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Printing {
    copies: i64,
}

#[derive(Embed, Serialize, Deserialize)]
struct Edition {
    year: i32,
    #[embed(max = 10)]
    printings: Vec<Printing>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i64,
    #[embed(max = 10)]
    editions: Vec<Edition>,
}

fn main() {
    // MongoDB allows one positional `$` per path.
    let _ = Book::editions().matched().printings().matched().copies().inc(1);
}
