use std::collections::HashMap;

use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "book_refs")]
struct BookRefs {
    #[serde(rename = "_id")]
    id: i64,
    // Counts per year: the keys are numbers, which are not field names.
    referrals_by_year: HashMap<u32, i64>,
}

fn main() {
    let _ = BookRefs::referrals_by_year().key(&2012).inc(1);
}
