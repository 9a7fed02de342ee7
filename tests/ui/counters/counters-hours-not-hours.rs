use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(counters(key = "book", day = "day"))]
struct BookRecs {
    #[serde(rename = "_id")]
    id: ObjectId,
    book: i32,
    day: DateTime,
    total: i64,
    hour: Vec<i64>,
}

fn main() {}
