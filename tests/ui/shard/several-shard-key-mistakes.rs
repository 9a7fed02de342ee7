use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "images",
    shard_key(keys = "segment, segment, nope", hashed = "data", fill = "segment", month = "uploded")
)]
struct Image {
    #[serde(rename = "_id")]
    id: i32,
    uploaded: odm::bson::DateTime,
    data: Vec<u8>,
    segment: i64,
}

fn main() {}
