use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Session {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(expire_after_secs = 4294967296)]
    created: odm::bson::DateTime,
}

fn main() {}
