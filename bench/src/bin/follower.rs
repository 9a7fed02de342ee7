//! Follower: the maintenance of writes made by other programs, against the same maintenance
//! done by odm in the request, in one run on one server. 200 parts, each copied into 50
//! products (10,000 copies); each round renames every part once:
//!
//! - (a) odm in the request: `update_by_id` of each part, its cascade sent with it;
//! - (b) another program: a plain `update_one` of each part, then a follower applying the 200
//!   events (`run_until_idle`);
//! - (c) odm's own renames again, followed afterwards: what following odm's own writes costs.
//!
//! Reported: wall time, events per second applied, commands, and the server's CPU time (read
//! from `/proc` when the benchmark started the local server; not shown with `MONGODB_URI`).
//!
//! `cargo xtask bench follower` runs it (release build).

use std::time::Duration;

use odm::bson::{doc, Document};
use odm::prelude::*;
use odm_bench::{median, show, Bench};

const PARTS: i64 = 200;
const PER_PART: i64 = 50;
const ROUNDS: usize = 5;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i64,
    #[denormalize(from = "Part", fields = "name", max = 20)]
    parts: Vec<PartSummary>,
}

/// The server's CPU time so far (user + system), when it is this process's local server.
fn server_cpu() -> Option<Duration> {
    if std::env::var("MONGODB_URI").is_ok_and(|u| !u.is_empty()) {
        return None;
    }
    let pid = odm::testing::local_server().ok()?.pid();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

struct Sample {
    wall: Duration,
    server: Option<Duration>,
    commands: usize,
}

async fn timed<F, Fut>(bench: &Bench, f: F) -> odm::Result<Sample>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = odm::Result<()>>,
{
    let before = server_cpu();
    let (wall, commands, out) = bench.measure(f).await;
    out?;
    let server = before.zip(server_cpu()).map(|(a, b)| b.saturating_sub(a));
    Ok(Sample {
        wall,
        server,
        commands: commands.len(),
    })
}

async fn check(bench: &Bench, round: usize) -> odm::Result<()> {
    let wrong = bench
        .db
        .collection::<Document>("products")
        .count_documents(doc! { "parts.name": { "$not": { "$regex": format!(" r{round}$") } } })
        .await?;
    assert_eq!(wrong, 0, "copies not renamed in round {round}");
    Ok(())
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("follower").await?;
    let odm = &bench.odm;
    let parts: Vec<Document> = (0..PARTS)
        .map(|i| doc! { "_id": i, "name": format!("part {i}") })
        .collect();
    bench
        .db
        .collection::<Document>("parts")
        .insert_many(parts)
        .await?;
    let products: Vec<Document> = (0..PARTS * PER_PART)
        .map(|i| doc! { "_id": i, "parts": [{ "id": i % PARTS, "name": format!("part {}", i % PARTS) }] })
        .collect();
    bench
        .db
        .collection::<Document>("products")
        .insert_many(products)
        .await?;
    odm.sync_indexes().await?;
    // The follower's position, stored once.
    let mut follower = odm.follower().max_wait(Duration::from_millis(20));
    follower.run_until_idle().await?;

    let mut round = 0;
    let mut a = Vec::new();
    let mut b_write = Vec::new();
    let mut b_follow = Vec::new();
    let mut c_follow = Vec::new();
    for _ in 0..ROUNDS {
        round += 1;
        let r = round;
        a.push(
            timed(&bench, || async {
                for i in 0..PARTS {
                    odm.update_by_id::<Part>(i, Part::name().set(format!("part {i} r{r}")))
                        .await?;
                }
                Ok(())
            })
            .await?,
        );
        check(&bench, r).await?;
        // (c): following the renames odm just made.
        c_follow.push(
            timed(&bench, || async {
                let report = follower.run_until_idle().await?;
                assert_eq!(report.events, PARTS as u64, "events of round {r}");
                Ok(())
            })
            .await?,
        );

        round += 1;
        let r = round;
        let raw = bench.db.collection::<Document>("parts");
        b_write.push(
            timed(&bench, || async {
                for i in 0..PARTS {
                    raw.update_one(
                        doc! { "_id": i },
                        doc! { "$set": { "name": format!("part {i} r{r}") } },
                    )
                    .await?;
                }
                Ok(())
            })
            .await?,
        );
        let mut applied = 0;
        b_follow.push(
            timed(&bench, || async {
                let report = follower.run_until_idle().await?;
                applied = report.events;
                Ok(())
            })
            .await?,
        );
        assert_eq!(applied, PARTS as u64, "events of round {r}");
        check(&bench, r).await?;
    }
    follower.stop().await?;

    let med = |s: &[Sample], f: fn(&Sample) -> Duration| median(s.iter().map(f).collect());
    let server = |s: &[Sample]| -> String {
        let all: Option<Vec<Duration>> = s.iter().map(|x| x.server).collect();
        all.map_or("-".to_owned(), |v| show(median(v)))
    };
    let cmds = |s: &[Sample]| s.iter().map(|x| x.commands).sum::<usize>() / s.len();
    println!(
        "{PARTS} renames per round, {} copies, median of {ROUNDS} rounds:",
        PARTS * PER_PART
    );
    println!(
        "{:<48} {:>10} {:>12} {:>9}",
        "", "wall", "server CPU", "commands"
    );
    let line = |name: &str, s: &[Sample]| {
        println!(
            "{name:<48} {:>10} {:>12} {:>9}",
            show(med(s, |x| x.wall)),
            server(s),
            cmds(s)
        );
    };
    line("(a) odm renames, cascades in the request", &a);
    line("(b) raw renames (the other program)", &b_write);
    line("(b) follower applying them", &b_follow);
    line("(c) follower after odm's own renames", &c_follow);
    let follow = med(&b_follow, |x| x.wall);
    println!(
        "follower: {:.0} events/s applied; (b) total / (a) = {:.2} wall",
        PARTS as f64 / follow.as_secs_f64(),
        (med(&b_write, |x| x.wall) + follow).as_secs_f64() / med(&a, |x| x.wall).as_secs_f64()
    );
    bench.finish().await
}
