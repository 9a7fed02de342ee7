// Every mistake in the copies of one model is reported in one compilation.
use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Embed, Serialize, Deserialize)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
struct LogMsg {
    #[serde(rename = "_id")]
    id: i32,
    time: DateTime,
    #[parent]
    host: Ref<Host>,
}

#[derive(Embed, Serialize, Deserialize)]
struct LogSummary {
    time: DateTime,
}

#[derive(Model, Serialize, Deserialize)]
struct Host {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Part", fields = "name")]
    parts: Vec<PartSummary>,
    #[denormalize(from = "LogMsg", fields = "time", latest = 100, sort = "time")]
    logmsgs: Vec<LogSummary>,
    #[denormalize(from = "Part", fields = "name", max = 20, limit = 5)]
    spare_parts: Vec<PartSummary>,
    #[frequently_updated]
    #[serde(skip)]
    load: f64,
}

fn main() {}
