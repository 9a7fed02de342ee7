use odm::prelude::*;

// Each mistake in an index's kind, collation or partial filter is reported, all at once.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "places", index(keys = "name, note", text, collation(locale = "fr")))]
struct Place {
    #[serde(rename = "_id")]
    id: i32,
    #[index(desc, kind = "2dsphere")]
    location: odm::bson::Document,
    #[index(kind = "hashed", kind = "wildcard")]
    team: String,
    #[index(collation(locale = "en", strenght = 2))]
    name: String,
    #[index(partial)]
    note: String,
}

fn main() {}
