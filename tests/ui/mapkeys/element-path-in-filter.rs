use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Referrer {
    domain: String,
    count: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "book_refs")]
struct BookRefs {
    #[serde(rename = "_id")]
    id: i64,
    #[embed(max = 100)]
    referrers: Vec<Referrer>,
}

fn main() {
    // `referrers.$.count` names what an update's filter matched: it is not a filter.
    let _ = BookRefs::referrers().matched().count().gt(3);
}
