use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movies")]
struct Movie {
    #[serde(rename = "_id")]
    id: i64,
}

// Every mistake is reported at once: the model is itself, a counter, and named twice.
#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "movie_details",
    subset_of = "MovieDetails",
    time_series(time = "at", meta = "movie"),
    subset_of = "Movie"
)]
struct MovieDetails {
    #[serde(rename = "_id")]
    id: i64,
    at: odm::bson::DateTime,
    movie: i64,
}

fn main() {}
