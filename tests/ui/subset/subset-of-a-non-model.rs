use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Movie {
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
