use odm::prelude::*;

// Neither "majority" nor a number of members.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "events", write_concern = "all")]
struct Event {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
