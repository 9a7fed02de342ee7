use std::collections::HashMap;

use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "book_refs")]
struct BookRefs {
    #[serde(rename = "_id")]
    id: i64,
    // Stored as written: `google.com` would be a path.
    referrers: HashMap<String, i64>,
}

fn main() {
    let _ = BookRefs::referrers().key("google.com").inc(1);
}
