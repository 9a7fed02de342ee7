use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Source {
    host: String,
    #[serde(rename = "app")]
    application: String,
}

// The host logs sharded by the host inside the embedded source, misspelt.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "events", shard_key(keys = "source.hots, at"))]
struct Event {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    source: Source,
    at: odm::bson::DateTime,
}

fn main() {}
