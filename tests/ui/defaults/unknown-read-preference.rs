use odm::prelude::*;

// A mode the server does not know (it spells them in camel case).
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "reports", read_preference = "secondary_preferred")]
struct Report {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
