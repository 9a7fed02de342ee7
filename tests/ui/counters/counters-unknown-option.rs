use odm::bson::DateTime;
use odm::counters::Hours;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(counters(key = "book", day = "day", minutes = "minute"))]
struct BookRecs {
    #[serde(rename = "_id")]
    id: ObjectId,
    book: i32,
    day: DateTime,
    total: i64,
    hour: Hours,
}

fn main() {}
