use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "movie_details", subset_of = "MovieDetails")]
struct MovieDetails {
    #[serde(rename = "_id")]
    id: i64,
    plot: String,
}

fn main() {}
