//! Seed 001's one-to-squillions: hosts and their log messages.
//!
//! A host may log more messages than any document could hold, even as bare ids, so each
//! message references its host (parent-referencing). odm indexes the reference without being
//! asked, reads the last messages of a host with one find, reads the last messages of many
//! hosts with a per-parent limit in one aggregate, and deletes a host's messages with the host.
//!
//! Both of the seed's denormalizations are declared too: the host's address is copied into
//! each message (into the "squillions" side), so messages are read by address with one query
//! and follow the host when its address changes; and the host keeps its last 10 messages
//! (into the "one" side), pushed with `$each`, `$sort` and `$slice` as messages are inserted.
//! Every step prints what it did and the commands it sent; ObjectIds of hosts are shown by
//! name (`ObjectId(goofy)`).
//!
//! Run it with `cargo run -p odm-examples --example host_logs`: it uses `MONGODB_URI` when set,
//! else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{say, say_lines};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;

// ANCHOR: host
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "hosts")]
struct Host {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[index(unique)]
    ipaddr: String,
    // ANCHOR: latest
    /// The host's last 10 messages by time (into the "one" side): each inserted message is
    /// also pushed here, and the oldest fall off. The messages themselves stay in `logmsg`.
    #[denormalize(
        from = "LogMsg",
        via = "host",
        fields = "time, message",
        latest = 10,
        sort = "time"
    )]
    logmsgs: Vec<LogSummary>,
    // ANCHOR_END: latest
}

/// What the host keeps of each of its last messages.
#[derive(Embed, Serialize, Deserialize, Debug)]
struct LogSummary {
    time: DateTime,
    message: String,
}
// ANCHOR_END: host

// ANCHOR: logmsg
/// The "squillions" side: each message references its host; the host holds no ids.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "logmsg",
    index(keys = "host, -time"),
    index(keys = "ipaddr, -time")
)]
struct LogMsg {
    #[serde(rename = "_id")]
    id: ObjectId,
    time: DateTime,
    message: String,
    /// Indexed without being asked (`host_1`). Deleting the host deletes its messages.
    #[parent(on_delete = "cascade")]
    host: Ref<Host>,
    // ANCHOR: ipaddr
    /// The host's address, copied into every message (into the "squillions" side): filled on
    /// insert, rewritten in every message of the host when its address changes.
    #[denormalize(from = "Host", via = "host", fields = "ipaddr")]
    ipaddr: String,
    // ANCHOR_END: ipaddr
}
// ANCHOR_END: logmsg

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("host_logs").await?;

    steps.start("Create the indexes: the compound `host, -time` serves the #[parent] reference");
    // ANCHOR: sync
    let report = odm.sync_indexes().await?;
    // ANCHOR_END: sync
    say_lines(&report);
    steps.sent();

    steps.start("Insert three hosts and their messages: one busy, one silent, one quiet");
    let hosts = [
        host("goofy.example.com", "127.66.66.66"),
        host("pluto.example.com", "127.66.66.67"),
        host("mickey.example.com", "127.66.66.68"),
    ];
    let [goofy, pluto, mickey] = &hosts;
    steps.name(goofy.id, "goofy");
    steps.name(pluto.id, "pluto");
    steps.name(mickey.id, "mickey");
    let now = DateTime::now().timestamp_millis();
    let mut messages = Vec::new();
    // goofy: a message a second for the last 40 seconds.
    for i in 0..40 {
        let text = if i % 10 == 0 {
            "cpu is on fire!"
        } else {
            "load average above 8"
        };
        messages.push(message(goofy, now - i * 1000, text));
    }
    // pluto: nothing. mickey: four messages from last week.
    let week = 7 * 24 * 3600 * 1000;
    for (i, text) in [
        "disk 91% full",
        "disk 95% full",
        "disk 99% full",
        "disk full",
    ]
    .into_iter()
    .enumerate()
    {
        let i = i64::try_from(i).expect("small");
        messages.push(message(mickey, now - week + i * 60_000, text));
    }
    for m in &messages {
        // goofy's by age (`goofy_0s` is the newest), mickey's by text (`disk_91`, `disk_full`).
        let name = if *m.host.id() == goofy.id {
            format!("goofy_{}s", (now - m.time.timestamp_millis()) / 1000)
        } else {
            m.message.replace("% full", "").replace(' ', "_")
        };
        steps.name(m.id, &name);
    }
    // ANCHOR: insert
    odm.insert_many(&hosts).await?;
    odm.insert_many(&messages).await?;
    // ANCHOR_END: insert
    say("goofy: 40 messages in the last 40 seconds; pluto: none; mickey: 4, a week old");
    say("each message copies its host's address; each host keeps its last 10");
    steps.sent();

    steps.start("The last 5 messages of one host: find, sort, limit");
    // ANCHOR: last_n
    let last = odm
        .find(LogMsg::host().refers_to(goofy.id))
        .sort(LogMsg::time().desc())
        .limit(5)
        .await?;
    // ANCHOR_END: last_n
    for m in &last {
        say(format_args!("{}  {}", clock(m.time), m.message));
    }
    steps.sent();

    steps.start("The last 3 messages of every host: a per-parent limit, one aggregate");
    // ANCHOR: children
    let latest = odm
        .children(LogMsg::host(), &hosts)
        .sort(LogMsg::time().desc())
        .limit_per_parent(3)
        .await?;
    for host in &hosts {
        println!("    {}: {} messages", host.name, latest.of(host).len());
    }
    // ANCHOR_END: children
    for host in &hosts {
        for m in latest.of(host) {
            say(format_args!(
                "  {:<20} {}  {}",
                host.name,
                clock(m.time),
                m.message
            ));
        }
    }
    steps.sent();

    steps.start("The same with one global limit of 9: the busy host takes everything");
    // ANCHOR: global_limit
    // What a populate with a plain `limit` does: 9 messages in all, not 3 per host.
    let ids = hosts.iter().map(|h| h.id);
    let wrong = odm
        .find(LogMsg::host().refers_to_any(ids))
        .sort(LogMsg::time().desc())
        .limit(9)
        .await?;
    // ANCHOR_END: global_limit
    for host in &hosts {
        let n = wrong.iter().filter(|m| m.host.id() == &host.id).count();
        say(format_args!("{}: {n} messages", host.name));
    }
    steps.sent();

    steps.start("A message as stored: its host's address is copied into it");
    let logmsg_raw = odm.database().collection::<Document>("logmsg");
    let stored = logmsg_raw
        .find_one(doc! { "host": mickey.id })
        .sort(doc! { "time": -1 })
        .await?
        .expect("inserted");
    if let Ok(id) = stored.get_object_id("_id") {
        steps.name(id, "disk_full");
    }
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("goofy as stored: its last 10 messages, oldest first, in the host");
    let hosts_raw = odm.database().collection::<Document>("hosts");
    let stored = hosts_raw
        .find_one(doc! { "_id": goofy.id })
        .await?
        .expect("inserted");
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("The last messages from an address: one find, no lookup of the host");
    // ANCHOR: by_ipaddr
    let from_mickey = odm
        .find(LogMsg::ipaddr().eq("127.66.66.68"))
        .sort(LogMsg::time().desc())
        .limit(3)
        .await?;
    // ANCHOR_END: by_ipaddr
    for m in &from_mickey {
        say(format_args!(
            "{}  {}  {}",
            m.ipaddr,
            clock(m.time),
            m.message
        ));
    }
    steps.sent();

    steps.start("The last messages of a host are in the host: one find reads both");
    // ANCHOR: read_latest
    let goofy_now = odm
        .find_one(Host::name().eq("goofy.example.com"))
        .await?
        .expect("inserted");
    let newest = goofy_now.logmsgs.iter().rev().take(3);
    // ANCHOR_END: read_latest
    say(format_args!(
        "{} keeps {} messages; the newest:",
        goofy_now.name,
        goofy_now.logmsgs.len()
    ));
    for m in newest {
        say(format_args!("  {}  {}", clock(m.time), m.message));
    }
    steps.sent();

    steps.start("A message arrives from an address (the seed's flow): find_id, then insert");
    // ANCHOR: arrives
    // From the monitoring system: the address of the host, and the text.
    let (log_ip, text) = ("127.66.66.66", "cpu is on fire!");
    // The host's id by its natural key, projecting only `_id`.
    let host_id = odm
        .find_id(Host::ipaddr().eq(log_ip))
        .await?
        .expect("a known host");
    // Insert the message: the ODM copies the address from the host into it, then pushes it
    // onto the host's last 10 (`$each`, `$sort`, `$slice: -10`).
    let arrived = LogMsg {
        id: ObjectId::new(),
        time: DateTime::now(),
        message: text.into(),
        host: Ref::new(host_id),
        ipaddr: String::new(),
    };
    odm.insert_one(&arrived).await?;
    // ANCHOR_END: arrives
    steps.name(arrived.id, "arrived");
    steps.sent();

    steps.start("A false alarm: deleting the message takes it off goofy's last 10");
    // ANCHOR: delete_message
    odm.delete_one(LogMsg::id().eq(arrived.id)).await?;
    // ANCHOR_END: delete_message
    let goofy_now = odm.get::<Host>(host_id).await?.expect("inserted");
    let still = goofy_now.logmsgs.iter().any(|m| m.time == arrived.time);
    say(format_args!(
        "{} keeps {} messages; the false alarm of {} among them: {still}",
        goofy_now.name,
        goofy_now.logmsgs.len(),
        clock(arrived.time),
    ));
    steps.sent();

    steps.start("goofy moves to another address: the copy follows in each of its 40 messages");
    // ANCHOR: move_host
    odm.update_one(
        Host::name().eq("goofy.example.com"),
        Host::ipaddr().set("127.66.66.99"),
    )
    .await?;
    // ANCHOR_END: move_host
    let old = odm.count(LogMsg::ipaddr().eq("127.66.66.66")).await?;
    let new = odm.count(LogMsg::ipaddr().eq("127.66.66.99")).await?;
    say(format_args!(
        "messages from 127.66.66.66: {old}; from 127.66.66.99: {new}"
    ));
    steps.sent();

    steps.start("The cascade plans: what a change of a host's address, and a new message, send");
    // ANCHOR: plan
    let host_plan = odm::denormalize::cascade_plan::<Host>();
    let logmsg_plan = odm::denormalize::cascade_plan::<LogMsg>();
    // ANCHOR_END: plan
    say_lines(&host_plan);
    say_lines(&logmsg_plan);
    steps.sent();

    steps.start("Delete goofy: `cascade` deletes its 40 messages too");
    // ANCHOR: cascade
    let deleted = odm.delete_one(Host::name().eq("goofy.example.com")).await?;
    let left = odm.count(Filter::<LogMsg>::all()).await?;
    // ANCHOR_END: cascade
    say(format_args!(
        "hosts deleted: {deleted}; messages left: {left} (mickey's)"
    ));
    steps.sent();

    common::drop_database(&odm).await
}

fn host(name: &str, ipaddr: &str) -> Host {
    Host {
        id: ObjectId::new(),
        name: name.into(),
        ipaddr: ipaddr.into(),
        // Kept by the ODM as messages are inserted.
        logmsgs: Vec::new(),
    }
}

fn message(host: &Host, millis: i64, text: &str) -> LogMsg {
    LogMsg {
        id: ObjectId::new(),
        time: DateTime::from_millis(millis),
        message: text.into(),
        host: Ref::new(host.id),
        // Copied from the host by the ODM on insert.
        ipaddr: String::new(),
    }
}

/// `2014-03-28 09:42:41`.
fn clock(time: DateTime) -> String {
    let full = time.try_to_rfc3339_string().unwrap_or_default();
    full.get(..19).unwrap_or(&full).replace('T', " ")
}
