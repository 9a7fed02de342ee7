use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct LogSummary {
    time: odm::bson::DateTime,
    message: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "logmsg")]
struct LogMsg {
    #[serde(rename = "_id")]
    id: i32,
    time: odm::bson::DateTime,
    message: String,
    #[parent]
    host: Ref<Host>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "hosts")]
struct Host {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "LogMsg", via = "host", fields = "time, message", latest = 10, sort = "time", cascade = "background")]
    logmsgs: Vec<LogSummary>,
}

fn main() {}
