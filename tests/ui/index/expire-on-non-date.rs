use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Session {
    #[serde(rename = "_id")]
    id: i32,
    #[index(expire_after_secs = 3600)]
    created: i64,
}

fn main() {}
