use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Review {
    id: ObjectId,
    text: String,
    created_at: odm::bson::DateTime,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "reviews",
    bucket(key = "user", items = "reviews")
)]
struct UserReviews {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    month: odm::bson::DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}

fn main() {}
