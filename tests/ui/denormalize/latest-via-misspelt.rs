// `via` of a latest-N copy names the source's reference back, which it lacks.
use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct LogMsg {
    #[serde(rename = "_id")]
    id: i32,
    time: DateTime,
    message: String,
    #[parent]
    host: Ref<Host>,
}

#[derive(Embed, Serialize, Deserialize)]
struct LogSummary {
    time: DateTime,
    message: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Host {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(
        from = "LogMsg",
        via = "hots",
        fields = "time, message",
        latest = 100,
        sort = "-time"
    )]
    logmsgs: Vec<LogSummary>,
}

fn main() {}
