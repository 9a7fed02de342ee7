use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(time_series(time = "at", meta = "bok"))]
struct RecEvent {
    #[serde(rename = "_id")]
    id: Option<ObjectId>,
    at: DateTime,
    book: i32,
}

fn main() {}
