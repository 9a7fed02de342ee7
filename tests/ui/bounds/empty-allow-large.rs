use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct LogMsg {
    #[serde(rename = "_id")]
    id: i32,
    message: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Host {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 10000, allow_large = "")]
    messages: Vec<Ref<LogMsg>>,
}

fn main() {}
