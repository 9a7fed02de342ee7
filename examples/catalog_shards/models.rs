//! The models of the sharded catalog (seed 004 on seed 001's parts catalog and host logs),
//! shared by the `catalog_shards` example and the shard tests.

use odm::bson::{Binary, DateTime};
use odm::prelude::*;

// ANCHOR: part
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
pub struct Part {
    #[serde(rename = "_id")]
    pub id: i32,
    pub partno: String,
    pub name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
pub struct PartSummary {
    pub id: Ref<Part>,
    pub name: String,
}
// ANCHOR_END: part

// ANCHOR: product
/// Products sharded by category: a catalog page reads one shard. The catalog number is unique
/// within its category (a unique index must start with the shard key).
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(
    collection = "products",
    shard_key(keys = "category"),
    index(keys = "category, catalog_number", unique)
)]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: i32,
    pub category: String,
    pub name: String,
    pub catalog_number: i64,
    #[denormalize(from = "Part", fields = "name", max = 50)]
    pub parts: Vec<PartSummary>,
}
// ANCHOR_END: product

// ANCHOR: logs
/// Hosts, sharded by `_id`: the latest-N push of a message finds its host by `_id`.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "hosts", shard_key(keys = "_id"))]
pub struct Host {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
    #[denormalize(
        from = "LogMsg",
        via = "host",
        fields = "time, message",
        latest = 3,
        sort = "time"
    )]
    pub logmsgs: Vec<LogSummary>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
pub struct LogSummary {
    pub time: DateTime,
    pub message: String,
}

/// Log messages, sharded by `{host, time}`: a host's messages of a period are on few shards.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "logmsg", shard_key(keys = "host, time"))]
pub struct LogMsg {
    #[serde(rename = "_id")]
    pub id: i32,
    #[parent(on_delete = "cascade")]
    pub host: Ref<Host>,
    pub time: DateTime,
    pub message: String,
}
// ANCHOR_END: logs

// ANCHOR: image
/// Exercise 8: the key is the month of the upload then the MD5 of the data (segmented: the
/// month's uploads spread over the shards that own its range). The ODM writes `segment` on
/// every insert and replace, whatever the struct holds.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(
    collection = "images",
    shard_key(keys = "segment", fill = "segment", month = "uploaded", hash = "data")
)]
pub struct Image {
    #[serde(rename = "_id")]
    pub id: i32,
    pub uploaded: DateTime,
    pub data: Binary,
    #[serde(default)]
    pub segment: String,
}
// ANCHOR_END: image

// ANCHOR: dotted
/// Where a log event came from: the host is a field of an embedded document.
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Source {
    pub host: String,
    #[serde(rename = "app")]
    pub application: String,
}

/// The host logs with the host inside an embedded `source`: the key `{source.host, at}`
/// reaches into it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "events", shard_key(keys = "source.host, at"))]
pub struct Event {
    #[serde(rename = "_id")]
    pub id: i32,
    #[embed]
    pub source: Source,
    pub at: DateTime,
    pub message: String,
}
// ANCHOR_END: dotted
