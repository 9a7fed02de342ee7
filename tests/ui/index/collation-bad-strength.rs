use odm::prelude::*;

// Strengths go from 1 to 5, and a collation needs its locale: both reported at once.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "members", index(keys = "name", collation(strength = 2)))]
struct Member {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique, collation(locale = "en", strength = 0))]
    email: String,
    name: String,
}

fn main() {}
