use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "logmsg")]
struct LogMsg {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[parent]
    host: Ref<Host>,
    time: i64,
    message: String,
}

#[derive(Embed, Serialize, Deserialize)]
struct LogSummary {
    time: i64,
    message: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "hosts")]
struct Host {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[denormalize(from = "LogMsg", via = "host", fields = "time, message", latest = 10, sort = "time")]
    logmsgs: Vec<LogSummary>,
}

fn main() {
    // The last ten messages are a copy odm keeps.
    let _ = Host::logmsgs().matched().message().set("edited".to_owned());
}
