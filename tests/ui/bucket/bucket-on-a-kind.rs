use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Review {
    id: ObjectId,
    created_at: odm::bson::DateTime,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "reviews")]
#[serde(tag = "type")]
enum Reviews {
    Monthly(MonthlyReviews),
}

#[derive(Model, Serialize, Deserialize)]
#[odm(
    kind_of = "Reviews",
    bucket(key = "user", period = "month", every = "month", items = "reviews", time = "created_at")
)]
struct MonthlyReviews {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    month: odm::bson::DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}

fn main() {}
