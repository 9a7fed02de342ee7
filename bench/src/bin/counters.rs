//! Counters: recording 1,000 recommendation events (20 books, 3 days, the seed's per-day
//! documents with hour sub-documents and minute counters), three ways, in one run on one
//! server: (a) `odm.counters().record`, one upsert per event; (b) the same upsert written by
//! hand with the driver (filter and `$inc` document built per event); (c) naive
//! read-modify-write, `find_one` of the day's document then a replacing upsert (two commands
//! per event, and wrong under concurrency). Then (a) and (b) again with 8 concurrent writers.
//!
//! `cargo xtask bench` runs it (release build).

use std::time::Duration;

use odm::bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use odm::counters::Hours;
use odm::mongodb::options::UpdateOptions;
use odm::prelude::*;
use odm_bench::{median, show, show_commands, Bench, Lcg};

const EVENTS: usize = 1_000;
const BOOKS: u64 = 20;
const DAY_MS: i64 = 24 * 3600 * 1000;

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "rec_ts", counters(key = "book", day = "day"))]
struct BookRecs {
    #[serde(rename = "_id")]
    id: ObjectId,
    book: i32,
    day: DateTime,
    total: i64,
    hour: Hours,
}

fn events(seed: u64) -> Vec<(i32, DateTime)> {
    let base = DateTime::parse_rfc3339_str("2012-10-10T00:00:00Z")
        .expect("a date")
        .timestamp_millis();
    let mut rng = Lcg(seed);
    (0..EVENTS)
        .map(|_| {
            let book = rng.below(BOOKS) as i32;
            let ms = rng.below(3 * DAY_MS as u64) as i64;
            (book, DateTime::from_millis(base + ms))
        })
        .collect()
}

/// (a) odm.
async fn odm_record(bench: &Bench, events: &[(i32, DateTime)]) -> odm::Result<()> {
    let counters = bench.odm.counters::<BookRecs>();
    for (book, at) in events {
        counters.record(*book, *at).await?;
    }
    Ok(())
}

/// (b) The seed's upsert, written by hand with the driver.
async fn hand_written(bench: &Bench, events: &[(i32, DateTime)]) -> odm::Result<()> {
    let coll = bench.db.collection::<Document>("rec_ts");
    let options = UpdateOptions::builder().upsert(true).build();
    for (book, at) in events {
        let ms = at.timestamp_millis();
        let day = DateTime::from_millis(ms - ms.rem_euclid(DAY_MS));
        let minute = ms.rem_euclid(DAY_MS) / 60_000;
        let hour = minute / 60;
        let mut inc = doc! { "total": 1 };
        inc.insert(format!("hour.{hour}.total"), 1);
        inc.insert(format!("hour.{hour}.{minute}"), 1);
        coll.update_one(
            doc! { "book": { "$eq": book }, "day": { "$eq": day } },
            doc! { "$inc": inc },
        )
        .with_options(options.clone())
        .await?;
    }
    Ok(())
}

/// (c) Read the day, count in the application, write the day back.
async fn naive(bench: &Bench, events: &[(i32, DateTime)]) -> odm::Result<()> {
    let coll = bench.db.collection::<Document>("rec_ts");
    let options = odm::mongodb::options::ReplaceOptions::builder()
        .upsert(true)
        .build();
    for (book, at) in events {
        let ms = at.timestamp_millis();
        let day = DateTime::from_millis(ms - ms.rem_euclid(DAY_MS));
        let minute = (ms.rem_euclid(DAY_MS) / 60_000).to_string();
        let hour = (ms.rem_euclid(DAY_MS) / 3_600_000).to_string();
        let filter = doc! { "book": book, "day": day };
        let mut doc = coll
            .find_one(filter.clone())
            .await?
            .unwrap_or_else(|| doc! { "book": book, "day": day, "total": 0, "hour": {} });
        let bump = |d: &mut Document, key: &str| {
            let n = match d.get(key) {
                Some(Bson::Int32(n)) => i64::from(*n),
                Some(Bson::Int64(n)) => *n,
                _ => 0,
            };
            d.insert(key, n + 1);
        };
        bump(&mut doc, "total");
        let hours = doc.get_document_mut("hour").expect("the day's hours");
        if !hours.contains_key(&hour) {
            hours.insert(hour.clone(), doc! {});
        }
        let h = hours.get_document_mut(&hour).expect("the hour");
        bump(h, "total");
        bump(h, &minute);
        coll.replace_one(filter, doc)
            .with_options(options.clone())
            .await?;
    }
    Ok(())
}

/// The same events from 8 concurrent writers, with `record` or the hand-written upsert.
async fn concurrent(bench: &Bench, events: &[(i32, DateTime)], by_odm: bool) -> odm::Result<()> {
    let mut writers = Vec::new();
    for chunk in events.chunks(events.len().div_ceil(8)) {
        let (odm, db, chunk) = (bench.odm.clone(), bench.db.clone(), chunk.to_vec());
        writers.push(tokio::spawn(async move {
            let bench = Bench {
                odm,
                db,
                log: odm::monitor::CommandLog::new(),
            };
            if by_odm {
                odm_record(&bench, &chunk).await
            } else {
                hand_written(&bench, &chunk).await
            }
        }));
    }
    for w in writers {
        w.await.expect("writer")?;
    }
    Ok(())
}

async fn reset(bench: &Bench) -> odm::Result<()> {
    bench
        .db
        .collection::<Document>("rec_ts")
        .delete_many(doc! {})
        .await?;
    Ok(())
}

/// The day documents as stored, without their `_id`s, in key order: all three must agree.
async fn stored(bench: &Bench) -> odm::Result<Vec<Document>> {
    use futures_util::TryStreamExt;
    let docs: Vec<Document> = bench
        .db
        .collection::<Document>("rec_ts")
        .find(doc! {})
        .projection(doc! { "_id": 0 })
        .sort(doc! { "book": 1, "day": 1 })
        .await?
        .try_collect()
        .await?;
    Ok(docs)
}

/// `1000 (update x1000)`, or for commands that alternate, `2000 (find x1000, update x1000)`.
fn counted(names: &[String]) -> String {
    let mut by_name: Vec<(&str, usize)> = Vec::new();
    for n in names {
        match by_name.iter_mut().find(|(m, _)| *m == n.as_str()) {
            Some((_, c)) => *c += 1,
            None => by_name.push((n, 1)),
        }
    }
    if by_name.len() == 1 {
        return show_commands(names);
    }
    let parts: Vec<String> = by_name.iter().map(|(n, c)| format!("{n} x{c}")).collect();
    format!("{} ({})", names.len(), parts.join(", "))
}

/// Total of the day documents' totals.
fn total(docs: &[Document]) -> i64 {
    docs.iter()
        .map(|d| match d.get("total") {
            Some(Bson::Int32(n)) => i64::from(*n),
            Some(Bson::Int64(n)) => *n,
            _ => 0,
        })
        .sum()
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("counters").await?;
    bench.odm.sync_indexes_of::<BookRecs>().await?;
    let events = events(7);
    let runs = 21;
    let naive_runs = 3;

    // Warm up, and check that both write the same documents.
    odm_record(&bench, &events).await?;
    let by_odm = stored(&bench).await?;
    reset(&bench).await?;
    hand_written(&bench, &events).await?;
    let by_hand = stored(&bench).await?;
    assert_eq!(total(&by_odm), EVENTS as i64);
    assert_eq!(by_odm.len(), by_hand.len());
    assert_eq!(total(&by_odm), total(&by_hand));

    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    let (mut a_cmds, mut b_cmds, mut c_cmds) = (Vec::new(), Vec::new(), Vec::new());
    // Interleaved, each going first in every other run, so that neither always follows the
    // other's writes.
    for run in 0..runs {
        for odm_turn in [run % 2 == 0, run % 2 == 1] {
            reset(&bench).await?;
            if odm_turn {
                let (t, cmds, r) = bench.measure(|| odm_record(&bench, &events)).await;
                r?;
                a.push(t);
                a_cmds = cmds;
            } else {
                let (t, cmds, r) = bench.measure(|| hand_written(&bench, &events)).await;
                r?;
                b.push(t);
                b_cmds = cmds;
            }
        }
    }
    for _ in 0..naive_runs {
        reset(&bench).await?;
        let (t, cmds, r) = bench.measure(|| naive(&bench, &events)).await;
        r?;
        c.push(t);
        c_cmds = cmds;
    }
    assert_eq!(total(&stored(&bench).await?), EVENTS as i64);
    let rows: [(&str, Duration, &[String]); 3] = [
        ("(a) odm counters().record", median(a), &a_cmds),
        ("(b) hand-written $inc upsert", median(b), &b_cmds),
        ("(c) find_one + replace", median(c), &c_cmds),
    ];
    println!();
    println!("record {EVENTS} events ({BOOKS} books, 3 days, minute counters), one writer; medians of {runs} runs ((c): {naive_runs})");
    for (name, t, cmds) in &rows {
        println!(
            "  {name:<30} {:>10}   commands: {}",
            show(*t),
            counted(cmds)
        );
    }
    let a_b = rows[0].1.as_secs_f64() / rows[1].1.as_secs_f64();
    let c_a = rows[2].1.as_secs_f64() / rows[0].1.as_secs_f64();
    println!("  a/b = {a_b:.3} (target <= 1.05)    c/a = {c_a:.2}");

    let (mut a, mut b) = (Vec::new(), Vec::new());
    for run in 0..runs {
        for odm_turn in [run % 2 == 0, run % 2 == 1] {
            reset(&bench).await?;
            let (t, _, r) = bench
                .measure(|| concurrent(&bench, &events, odm_turn))
                .await;
            r?;
            if odm_turn {
                a.push(t)
            } else {
                b.push(t)
            }
        }
    }
    assert_eq!(total(&stored(&bench).await?), EVENTS as i64);
    let (a, b) = (median(a), median(b));
    println!();
    println!("record {EVENTS} events from 8 concurrent writers; medians of {runs} runs");
    println!("  {:<30} {:>10}", "(a) odm counters().record", show(a));
    println!("  {:<30} {:>10}", "(b) hand-written $inc upsert", show(b));
    println!(
        "  a/b = {:.3} (target <= 1.05)",
        a.as_secs_f64() / b.as_secs_f64()
    );
    bench.finish().await
}
