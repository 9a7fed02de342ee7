use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movies", subset_of = "MovieDetails")]
struct Movie {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movie_details", subset_of = "Movie")]
struct MovieDetails {
    #[serde(rename = "_id")]
    id: i64,
    plot: String,
}

fn main() {}
