use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(time_series(time = "at", meta = "book"))]
struct RecEvent {
    #[serde(rename = "_id")]
    id: Option<ObjectId>,
    at: i64,
    book: i32,
}

fn main() {}
