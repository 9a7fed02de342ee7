use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Host {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct LogMsg {
    #[serde(rename = "_id")]
    id: i32,
    #[parent(on_delete = "delete")]
    host: Ref<Host>,
}

fn main() {}
