use odm::prelude::*;

// Each default is said once; both errors are reported together.
#[derive(Model, Serialize, Deserialize)]
#[odm(
    collection = "events",
    read_preference = "nearest",
    read_preference = "primary",
    write_concern = 1,
    write_concern = "majority"
)]
struct Event {
    #[serde(rename = "_id")]
    id: i32,
}

fn main() {}
