use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Line {
    host: String,
}

// Every way a key can fail to name one value per document, reported at once.
#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "events",
    shard_key(keys = "message.len, lines.host, source.inner.host, tags, source..host")
)]
struct Event {
    #[serde(rename = "_id")]
    id: i32,
    message: String,
    #[embed(max = 10)]
    lines: Vec<Line>,
    #[embed]
    source: Line,
    tags: Vec<String>,
}

fn main() {}
