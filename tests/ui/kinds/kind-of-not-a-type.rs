use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(kind_of = "the books")]
struct SeriesBook {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
