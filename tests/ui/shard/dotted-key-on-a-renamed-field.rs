use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Source {
    host: String,
    #[serde(rename = "app")]
    application: String,
}

// `application` is stored as `app`: the key would name a path no document has.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "events", shard_key(keys = "source.application"))]
struct Event {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    source: Source,
}

fn main() {}
