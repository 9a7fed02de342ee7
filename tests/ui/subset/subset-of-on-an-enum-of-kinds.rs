use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movies")]
struct Movie {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "Details")]
struct Short {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movie_details", subset_of = "Movie")]
#[serde(tag = "type")]
enum Details {
    Short(Short),
}

fn main() {}
