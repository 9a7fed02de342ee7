use odm::bson::DateTime;
use odm::counters::Hours;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(counters(key = "book", day = "day", total = "book"))]
struct BookRecs {
    #[serde(rename = "_id")]
    id: ObjectId,
    book: i64,
    day: DateTime,
    hour: Hours,
}

fn main() {}
