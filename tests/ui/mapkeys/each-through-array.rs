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
    // `editions.printings` goes through the editions without naming one.
    let _ = Book::editions().printings().each().copies().inc(1);
}
