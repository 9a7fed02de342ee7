use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Upload {
    segment: String,
}

// odm computes a filled key into a field of the struct itself, not into an embedded document.
#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "images",
    shard_key(keys = "upload.segment", fill = "upload.segment", month = "uploaded", hash = "data")
)]
struct Image {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    upload: Upload,
    uploaded: odm::bson::DateTime,
    data: String,
}

fn main() {}
