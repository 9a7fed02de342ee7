use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct LogSummary {
    time: DateTime,
    message: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "hosts")]
struct Host {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "LogMsg", via = "host", fields = "time, message", latest = 100, sort = "time")]
    logmsgs: Vec<LogSummary>,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "logmsg")]
struct LogMsg {
    #[serde(rename = "_id")]
    id: i32,
    time: DateTime,
    message: String,
    #[parent]
    host: Ref<Host>,
}

fn main() {
    let _ = Host::logmsgs().push(LogSummary {
        time: DateTime::now(),
        message: "cpu is on fire!".into(),
    });
}
