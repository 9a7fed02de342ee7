use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Session {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(expire_after_secs = "1h")]
    created: odm::bson::DateTime,
}

fn main() {}
