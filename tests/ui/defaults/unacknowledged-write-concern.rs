use odm::prelude::*;

// `w: 0`: the server answers nothing, so odm could not report a refused write.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "events", write_concern = 0)]
struct Event {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
