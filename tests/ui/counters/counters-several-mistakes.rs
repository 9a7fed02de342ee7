use odm::counters::Hours;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(counters(key = "bok", day = "title", total = "title", granularity = "week"))]
struct BookRecs {
    #[serde(rename = "_id")]
    id: i32,
    book: i32,
    title: String,
    hour: Hours,
}

fn main() {}
