//! Buckets and counters sharded by a field their upserts cannot name: the first add to a
//! bucket, or the first event of a day, would create a document without its shard key.

use odm::bson::{oid::ObjectId, DateTime};
use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct Review {
    rating: i32,
    at: DateTime,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "regional_review_buckets",
    bucket(key = "user", period = "month", every = "month", items = "reviews", time = "at"),
    shard_key(keys = "region, user")
)]
struct RegionalReviewBucket {
    #[serde(rename = "_id")]
    id: ObjectId,
    region: String,
    user: String,
    month: DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "branch_recs",
    counters(key = "book", day = "day"),
    shard_key(keys = "branch")
)]
struct BranchRecs {
    #[serde(rename = "_id")]
    id: ObjectId,
    branch: Option<String>,
    book: i32,
    day: DateTime,
    total: i64,
    hour: odm::counters::Hours,
}

fn main() {}
