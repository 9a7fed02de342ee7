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
    bucket(key = "user", period = "month", every = "month", items = "reviews", time = "created_at", item_id = "review_id")
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
