use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movies")]
struct Movie {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movie_details", subset_of = "Movie", subset_of = "Movie")]
struct MovieDetails {
    #[serde(rename = "_id")]
    id: i64,
    plot: String,
}

fn main() {}
