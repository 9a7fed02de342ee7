//! Pre-aggregated counters (the workshop's exercise 5, solution B) and native time-series
//! collections: one upsert per event at paths odm computes, typed reads, pre-allocation, the
//! unique `(key, day)` index, concurrent writers, hostile keys, malformed day documents.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{last_command, listed_indexes, sent, stored};
use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, DateTime, Document};
use odm::counters::Hours;
use odm::prelude::*;
use odm::testing::TestDb;
use odm::Error;

// ANCHOR: model
/// A book's recommendations of one day (the seed's `rec_ts`): one document per book and day.
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
// ANCHOR_END: model

/// Counted down to the hour only, with renamed fields.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "page_views",
    counters(
        key = "page",
        day = "date",
        total = "count",
        hours = "by_hour",
        granularity = "hour"
    )
)]
struct PageViews {
    #[serde(rename = "_id")]
    id: ObjectId,
    page: String,
    #[serde(rename = "d")]
    date: DateTime,
    count: i32,
    by_hour: Hours,
    note: Option<String>,
}

/// Keyed by any BSON value, documents with `$` keys included.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "any_key", counters(key = "key", day = "day"))]
struct AnyKey {
    #[serde(rename = "_id")]
    id: ObjectId,
    key: Bson,
    day: DateTime,
    total: i64,
    hour: Hours,
}

/// Keyed by a document (the loan queue's `{borrower, book}`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Shelf {
    room: String,
    shelf: i32,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "shelf_visits", counters(key = "shelf", day = "day"))]
struct ShelfVisits {
    #[serde(rename = "_id")]
    id: ObjectId,
    shelf: Shelf,
    day: DateTime,
    total: i64,
    hour: Hours,
}

fn at(rfc3339: &str) -> DateTime {
    DateTime::parse_rfc3339_str(rfc3339).expect("a valid date")
}

async fn raw_docs(db: &TestDb, collection: &str, filter: Document) -> Vec<Document> {
    db.raw()
        .collection::<Document>(collection)
        .find(filter)
        .await
        .expect("raw find")
        .try_collect()
        .await
        .expect("raw cursor")
}

/// The seed: "record a recommendation created one minute before midnight" is one update,
/// `$inc: { total: 1, "hour.23.total": 1, "hour.23.1439": 1 }`, upserting the day's document.
#[tokio::test]
async fn recording_an_event_is_one_upsert_at_computed_paths() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let counters = odm.counters::<BookRecs>();
    counters.record(1, at("2012-10-11T23:59:42Z")).await?;
    let update = last_command(&db, "update");
    let statement = update.get_array("updates").expect("updates")[0]
        .as_document()
        .expect("a statement")
        .clone();
    assert_eq!(
        statement.get_document("q").expect("q"),
        &doc! { "book": 1, "day": { "$eq": at("2012-10-11T00:00:00Z") } }
    );
    assert_eq!(
        statement.get_document("u").expect("u"),
        &doc! { "$inc": { "total": 1, "hour.23.total": 1, "hour.23.1439": 1 } }
    );
    assert_eq!(statement.get_bool("upsert").ok(), Some(true));

    counters.record(1, at("2012-10-11T23:59:59.999Z")).await?;
    counters.record(1, at("2012-10-11T00:00:00Z")).await?;
    counters.record_n(1, at("2012-10-11T07:30:00Z"), 5).await?;
    counters.record(1, at("2012-10-12T00:00:00Z")).await?;
    assert_eq!(sent(&db), vec!["update"; 4]);

    let days = raw_docs(&db, "rec_ts", doc! { "book": 1 }).await;
    assert_eq!(days.len(), 2, "one document per day: {days:?}");
    let day = raw_docs(&db, "rec_ts", doc! { "day": at("2012-10-11T00:00:00Z") }).await;
    let day = &day[0];
    assert_eq!(day.get_i32("book").ok(), Some(1));
    assert_eq!(day.get_i32("total").ok(), Some(8));
    assert_eq!(
        day.get_document("hour").expect("hour"),
        &doc! {
            "23": { "total": 2, "1439": 2 },
            "0": { "total": 1, "0": 1 },
            "7": { "total": 5, "450": 5 },
        }
    );
    Ok(())
}

/// A day, an hour and a range of days are one `find` each, on the unique `(key, day)` index
/// that `sync_indexes` creates for the model.
#[tokio::test]
async fn typed_reads_are_one_find_each() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes_of::<BookRecs>().await?;
    let index = listed_indexes(&db, "rec_ts")
        .await
        .into_iter()
        .find(|i| i.get_str("name").ok() == Some("book_1_day_1"))
        .expect("the (key, day) index");
    assert_eq!(index.get_bool("unique").ok(), Some(true));
    let counters = odm.counters::<BookRecs>();
    for (day, n) in [("10", 3), ("11", 148), ("12", 1), ("14", 9)] {
        counters
            .record_n(1, at(&format!("2012-10-{day}T23:59:00Z")), n)
            .await?;
        counters
            .record(1, at(&format!("2012-10-{day}T08:15:00Z")))
            .await?;
    }
    counters.record(2, at("2012-10-11T08:15:00Z")).await?;
    db.commands().clear();

    let day = counters
        .day(1, at("2012-10-11T12:00:00Z"))
        .await?
        .expect("recorded");
    assert_eq!(sent(&db), vec!["find"]);
    assert_eq!((day.book, day.total), (1, 149));
    assert_eq!(day.day, at("2012-10-11T00:00:00Z"));
    assert_eq!(day.hour.total_of(23), 148);
    assert_eq!(day.hour.minute(1439), 148);
    assert_eq!(day.hour.minute(8 * 60 + 15), 1);
    assert_eq!(day.hour.minute(0), 0);
    assert!(counters.day(1, at("2012-10-13T00:00:00Z")).await?.is_none());
    db.commands().clear();

    let hour = counters.hour(1, at("2012-10-11T23:00:00Z")).await?;
    let find = last_command(&db, "find");
    assert_eq!(
        find.get_document("projection").ok(),
        Some(&doc! { "hour.23": 1 })
    );
    assert_eq!(hour.total(), 148);
    assert_eq!(hour.minutes().collect::<Vec<_>>(), vec![(1439, 148)]);
    let empty = counters.hour(1, at("2012-10-11T03:00:00Z")).await?;
    assert_eq!((empty.total(), empty.minutes().count()), (0, 0));
    db.commands().clear();

    let range = counters
        .days(1, at("2012-10-11T18:00:00Z"), at("2012-10-14T00:00:00Z"))
        .await?;
    assert_eq!(sent(&db), vec!["find"]);
    let totals: Vec<(DateTime, i64)> = range.iter().map(|d| (d.day, d.total)).collect();
    assert_eq!(
        totals,
        vec![
            (at("2012-10-11T00:00:00Z"), 149),
            (at("2012-10-12T00:00:00Z"), 2),
            (at("2012-10-14T00:00:00Z"), 10),
        ]
    );
    Ok(())
}

/// A deterministic sequence of numbers (no randomness in tests).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

/// Events from 8 concurrent writers, over 5 books and 3 days: every counter (the day's total,
/// each hour's total, each minute) equals the count computed from the events, read back with
/// the raw driver; one `update` per event; one document per book and day.
///
/// 30,000 events by default, so that the file stays under a minute on a loaded two-core
/// machine (debug builds send about 2,000 updates a second there);
/// `ODM_COUNTERS_EVENTS=100000` runs the full 100,000.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_count_every_event_exactly() -> odm::Result<()> {
    const WRITERS: u64 = 8;
    let events_wanted: u64 = std::env::var("ODM_COUNTERS_EVENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30_000);
    let db = common::db().await?;
    db.odm().sync_indexes_of::<BookRecs>().await?;
    let base = at("2012-10-10T00:00:00Z").timestamp_millis();
    let mut rng = Lcg(5);
    let events: Vec<(i32, DateTime)> = (0..events_wanted)
        .map(|_| {
            let book = rng.next(5) as i32;
            let ms = rng.next(3 * 24 * 3600 * 1000) as i64;
            (book, DateTime::from_millis(base + ms))
        })
        .collect();
    db.commands().clear();
    let per_writer = events_wanted.div_ceil(WRITERS) as usize;
    let mut writers = Vec::new();
    for chunk in events.chunks(per_writer) {
        let (odm, chunk) = (db.odm().clone(), chunk.to_vec());
        writers.push(tokio::spawn(async move {
            let counters = odm.counters::<BookRecs>();
            for (book, when) in chunk {
                counters.record(book, when).await?;
            }
            Ok::<(), Error>(())
        }));
    }
    for w in writers {
        w.await.expect("writer")?;
    }
    assert_eq!(
        db.commands().count_of("update"),
        events.len(),
        "one update per event"
    );

    // The truth, from the events.
    type Day = (i64, [i64; 24], BTreeMap<u16, i64>);
    let mut truth: HashMap<(i32, DateTime), Day> = HashMap::new();
    for (book, when) in &events {
        let day = odm::counters::day_start(*when);
        let minute = odm::counters::minute_of_day(*when);
        let entry = truth
            .entry((*book, day))
            .or_insert_with(|| (0, [0; 24], BTreeMap::new()));
        entry.0 += 1;
        entry.1[usize::from(minute / 60)] += 1;
        *entry.2.entry(minute).or_default() += 1;
    }
    let found = stored(&db, "rec_ts").await;
    assert_eq!(found.len(), truth.len(), "one document per book and day");
    let number = |b: &Bson| match b {
        Bson::Int32(n) => i64::from(*n),
        Bson::Int64(n) => *n,
        other => panic!("not a count: {other}"),
    };
    for doc in &found {
        let key = (
            doc.get_i32("book").expect("book"),
            *doc.get_datetime("day").expect("day"),
        );
        let (total, hours, minutes) = truth.get(&key).expect("a day with events");
        assert_eq!(number(doc.get("total").expect("total")), *total, "{key:?}");
        let stored_hours = doc.get_document("hour").expect("hour");
        let mut seen_minutes = BTreeMap::new();
        for (h, value) in stored_hours {
            let h: usize = h.parse().expect("an hour");
            let value = value.as_document().expect("an hour document");
            assert_eq!(number(value.get("total").expect("total")), hours[h]);
            for (m, n) in value.iter().filter(|(k, _)| *k != "total") {
                seen_minutes.insert(m.parse::<u16>().expect("a minute"), number(n));
            }
        }
        let hours_with_events = hours.iter().filter(|n| **n > 0).count();
        assert_eq!(stored_hours.len(), hours_with_events, "{key:?}");
        assert_eq!(&seen_minutes, minutes, "every minute of {key:?}");
    }

    // The typed reads agree.
    let counters = db.odm().counters::<BookRecs>();
    let range = counters
        .days(3, base_day(0), base_day(2))
        .await?
        .into_iter()
        .map(|d| (d.day, d.total, d.hour))
        .collect::<Vec<_>>();
    assert_eq!(range.len(), 3);
    for (day, total, hours) in range {
        let (t, h, m) = &truth[&(3, day)];
        assert_eq!(total, *t);
        for hour in 0..24u8 {
            assert_eq!(hours.total_of(hour), h[usize::from(hour)]);
        }
        for minute in 0..1440u16 {
            assert_eq!(hours.minute(minute), m.get(&minute).copied().unwrap_or(0));
        }
    }
    Ok(())
}

fn base_day(n: i64) -> DateTime {
    DateTime::from_millis(at("2012-10-10T00:00:00Z").timestamp_millis() + n * 86_400_000)
}

/// Pre-allocation inserts the zeroed day once, whatever the number of concurrent callers; the
/// events then change counters in place; a second pre-allocation changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn preallocation_is_idempotent_under_concurrency() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<BookRecs>().await?;
    db.commands().clear();
    let mut callers = Vec::new();
    for _ in 0..8 {
        let odm = db.odm().clone();
        callers.push(tokio::spawn(async move {
            odm.counters::<BookRecs>()
                .preallocate(7, at("2012-10-11T15:00:00Z"))
                .await
        }));
    }
    let mut created = 0;
    for c in callers {
        created += usize::from(c.await.expect("caller")?);
    }
    assert_eq!(created, 1, "exactly one call created the day");
    let update = db
        .commands()
        .take()
        .into_iter()
        .filter(|c| c.name == "update")
        .count();
    assert!((8..=9).contains(&update), "one update per call: {update}");
    let days = stored(&db, "rec_ts").await;
    assert_eq!(days.len(), 1);
    let day = &days[0];
    assert_eq!(day.get_i32("total").ok(), Some(0));
    let hours = day.get_document("hour").expect("hour");
    assert_eq!(hours.len(), 24);
    for (h, value) in hours {
        let h: u16 = h.parse().expect("an hour");
        let value = value.as_document().expect("an hour");
        assert_eq!(value.len(), 61, "the total and 60 minutes");
        assert_eq!(value.get_i32("total").ok(), Some(0));
        for m in h * 60..h * 60 + 60 {
            assert_eq!(value.get_i32(m.to_string()).ok(), Some(0));
        }
    }

    let counters = db.odm().counters::<BookRecs>();
    counters.record(7, at("2012-10-11T23:59:00Z")).await?;
    assert!(!counters.preallocate(7, at("2012-10-11T00:00:00Z")).await?);
    let day = &stored(&db, "rec_ts").await[0];
    assert_eq!(day.get_i32("total").ok(), Some(1));
    let h23 = day
        .get_document("hour")
        .and_then(|h| h.get_document("23"))
        .expect("hour 23");
    assert_eq!(h23.get_i32("1439").ok(), Some(1));
    assert_eq!(h23.get_i32("1438").ok(), Some(0));
    // In place: the keys keep their order.
    let keys: Vec<&String> = h23.keys().collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("total"));
    assert_eq!(keys.last().map(|k| k.as_str()), Some("1439"));
    Ok(())
}

/// Hour granularity counts the day and its hours, under the model's own (renamed) fields, and
/// leaves the model's optional fields absent.
#[tokio::test]
async fn hour_granularity_and_renamed_fields() -> odm::Result<()> {
    let db = common::db().await?;
    let counters = db.odm().counters::<PageViews>();
    counters
        .record("/books/1", at("2012-10-11T23:59:00Z"))
        .await?;
    counters
        .record("/books/1", at("2012-10-11T23:01:00Z"))
        .await?;
    let update = last_command(&db, "update");
    let statement = update.get_array("updates").expect("updates")[0]
        .as_document()
        .expect("a statement")
        .clone();
    assert_eq!(
        statement.get_document("u").expect("u"),
        &doc! { "$inc": { "count": 1, "by_hour.23.total": 1 } }
    );
    let stored = stored(&db, "page_views").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].get_str("page").ok(), Some("/books/1"));
    assert_eq!(
        stored[0].get_datetime("d").ok(),
        Some(&at("2012-10-11T00:00:00Z"))
    );
    assert_eq!(stored[0].get_i32("count").ok(), Some(2));
    assert_eq!(
        stored[0].get_document("by_hour").ok(),
        Some(&doc! { "23": { "total": 2 } })
    );
    let day = counters
        .day("/books/1", at("2012-10-11T00:00:00Z"))
        .await?
        .expect("recorded");
    assert_eq!(
        (day.count, day.by_hour.total_of(23), day.note),
        (2, 2, None)
    );
    assert!(
        counters
            .preallocate("/books/2", at("2012-10-11T00:00:00Z"))
            .await?
    );
    let zeroed = raw_docs(&db, "page_views", doc! { "page": "/books/2" }).await;
    let hours = zeroed[0].get_document("by_hour").expect("by_hour");
    assert_eq!(hours.len(), 24);
    assert_eq!(hours.get_document("5").ok(), Some(&doc! { "total": 0 }));
    Ok(())
}

/// Keys are values: a key with `.` or `$`, a string that looks like an operator document, a
/// document with `$` keys and a document key are each matched literally and stored as given;
/// none reaches another key's counters.
#[tokio::test]
async fn hostile_keys_are_values() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let day = at("2012-10-11T10:00:00Z");
    let strings = ["a.b", "$gt", "{\"$gt\": \"\"}", "hour.23", ""];
    let views = odm.counters::<PageViews>();
    for (i, key) in strings.iter().enumerate() {
        views.record_n(*key, day, i as i64 + 1).await?;
    }
    for (i, key) in strings.iter().enumerate() {
        let found = raw_docs(&db, "page_views", doc! { "page": { "$eq": key } }).await;
        assert_eq!(found.len(), 1, "{key}");
        assert_eq!(found[0].get_i32("count").ok(), Some(i as i32 + 1), "{key}");
        let read = views.day(*key, day).await?.expect("recorded");
        assert_eq!((read.page.as_str(), read.count), (*key, i as i32 + 1));
    }

    let any = odm.counters::<AnyKey>();
    any.record(Bson::from("plain"), day).await?;
    let hostile = [
        Bson::Document(doc! { "$ne": null }),
        Bson::Document(doc! { "$gt": "" }),
        Bson::Document(doc! { "$exists": true }),
    ];
    for key in &hostile {
        any.record(key.clone(), day).await?;
    }
    let all = stored(&db, "any_key").await;
    assert_eq!(all.len(), 4, "each key its own day: {all:?}");
    let plain = raw_docs(&db, "any_key", doc! { "key": { "$eq": "plain" } }).await;
    assert_eq!(
        plain[0].get_i32("total").ok(),
        Some(1),
        "untouched by the others"
    );
    for key in &hostile {
        let found = raw_docs(&db, "any_key", doc! { "key": { "$eq": key.clone() } }).await;
        assert_eq!(found.len(), 1, "{key}");
        assert_eq!(found[0].get("key"), Some(key));
        assert_eq!(found[0].get_i32("total").ok(), Some(1));
    }

    let shelves = odm.counters::<ShelfVisits>();
    let a = Shelf {
        room: "reading.room".into(),
        shelf: 1,
    };
    let b = Shelf {
        room: "$where".into(),
        shelf: 1,
    };
    shelves.record(&a, day).await?;
    shelves.record(&a, day).await?;
    shelves.record(&b, day).await?;
    let read = shelves.day(&a, day).await?.expect("recorded");
    assert_eq!((read.shelf, read.total), (a, 2));
    assert_eq!(shelves.day(&b, day).await?.map(|d| d.total), Some(1));
    Ok(())
}

/// A day document that is not what the model declares (an hour past 23, a minute outside its
/// hour, a count that is not a number) is a decode error naming the collection, the `_id` and
/// the path, for a day, an hour and a range alike.
#[tokio::test]
async fn malformed_day_documents_are_typed_errors() -> odm::Result<()> {
    let db = common::db().await?;
    let coll = db.raw().collection::<Document>("rec_ts");
    let day = at("2012-10-11T00:00:00Z");
    let bad = [
        (
            1,
            doc! { "24": { "total": 1 } },
            "hour",
            "`24` is not an hour",
        ),
        (
            2,
            doc! { "23": { "total": 1, "1500": 1 } },
            "hour.23",
            "`1500` is neither `total` nor a minute of hour 23",
        ),
        (
            3,
            doc! { "23": { "total": 1, "1439": "many" } },
            "hour.23.1439",
            "invalid type",
        ),
        (4, doc! { "7": 3 }, "hour.7", "invalid type"),
    ];
    let mut ids = Vec::new();
    for (book, hours, _, _) in &bad {
        let id = ObjectId::new();
        ids.push(id);
        coll.insert_one(doc! {
            "_id": id, "book": book, "day": day, "total": 1, "hour": hours.clone(),
        })
        .await
        .expect("raw insert");
    }
    let counters = db.odm().counters::<BookRecs>();
    for ((book, _, path, message), id) in bad.iter().zip(&ids) {
        let err = counters.day(*book, day).await.expect_err("malformed");
        match &err {
            Error::Decode {
                collection,
                id: shown,
                path: p,
                message: m,
            } => {
                assert_eq!(collection, "rec_ts");
                assert!(shown.contains(&id.to_hex()), "{err}");
                assert_eq!(p, path, "{err}");
                assert!(m.contains(message), "{err}");
            }
            other => panic!("expected a decode error, got {other}"),
        }
        let err = counters.days(*book, day, day).await.expect_err("malformed");
        assert!(
            matches!(&err, Error::Decode { path: p, .. } if p == path),
            "{err}"
        );
    }
    // The hour read checks the hour it reads.
    let err = counters
        .hour(2, at("2012-10-11T23:00:00Z"))
        .await
        .expect_err("malformed");
    assert!(
        matches!(&err, Error::Decode { path, .. } if path == "hour.23"),
        "{err}"
    );
    let err = counters
        .hour(4, at("2012-10-11T07:00:00Z"))
        .await
        .expect_err("malformed");
    assert!(
        matches!(&err, Error::Decode { path, .. } if path == "hour.7"),
        "{err}"
    );
    Ok(())
}

/// The second `update` after a duplicate key (what a concurrent first event of the day causes)
/// is sent once, and a duplicate that persists is returned: a unique index of the collection
/// on the key alone refuses a second day of the same book, whatever the retry.
#[tokio::test]
async fn a_duplicate_key_is_sent_once_more_then_returned() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let coll = db.raw().collection::<Document>("rec_ts");
    coll.create_index(
        odm::mongodb::IndexModel::builder()
            .keys(doc! { "book": 1 })
            .options(
                odm::mongodb::options::IndexOptions::builder()
                    .unique(true)
                    .name("one_day_per_book".to_owned())
                    .build(),
            )
            .build(),
    )
    .await?;
    let counters = odm.counters::<BookRecs>();
    counters.record(1, at("2012-10-11T10:00:00Z")).await?;
    db.commands().clear();
    let err = counters
        .record(1, at("2012-10-12T10:00:00Z"))
        .await
        .expect_err("the key's index refuses a second day");
    assert!(
        matches!(&err, Error::DuplicateKey { collection, index, .. }
            if collection == "rec_ts" && index == "one_day_per_book"),
        "{err:?}"
    );
    assert_eq!(sent(&db), ["update", "update"], "one retry, no more");
    let days = raw_docs(&db, "rec_ts", doc! {}).await;
    assert_eq!(days.len(), 1, "nothing inserted: {days:?}");
    assert_eq!(days[0].get_i32("total").ok(), Some(1));
    Ok(())
}

/// `.session(..)` runs recording and reading in the caller's transaction: the transaction reads
/// its own events; aborted, nothing landed; committed, the day holds them.
#[tokio::test]
async fn counters_run_in_the_callers_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let counters = odm.counters::<BookRecs>();
    // ANCHOR: session
    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    counters
        .record_n(1, at("2012-10-11T23:59:42Z"), 3)
        .session(&mut session)
        .await?;
    // ANCHOR_END: session
    let day = counters
        .day(1, at("2012-10-11T00:00:00Z"))
        .session(&mut session)
        .await?
        .expect("the transaction's own day");
    assert_eq!(day.total, 3);
    let hour = counters
        .hour(1, at("2012-10-11T23:00:00Z"))
        .session(&mut session)
        .await?;
    assert_eq!(hour.total(), 3);
    assert!(
        counters.day(1, at("2012-10-11T00:00:00Z")).await?.is_none(),
        "not yet visible outside"
    );
    session.abort_transaction().await?;
    assert!(
        raw_docs(&db, "rec_ts", doc! {}).await.is_empty(),
        "aborted: nothing recorded"
    );

    session.start_transaction().await?;
    assert!(
        counters
            .preallocate(1, at("2012-10-12T00:00:00Z"))
            .session(&mut session)
            .await?
    );
    counters
        .record(1, at("2012-10-12T08:00:00Z"))
        .session(&mut session)
        .await?;
    let days = counters
        .days(1, at("2012-10-11T00:00:00Z"), at("2012-10-12T00:00:00Z"))
        .session(&mut session)
        .await?;
    assert_eq!(days.len(), 1);
    session.commit_transaction().await?;
    let stored = raw_docs(&db, "rec_ts", doc! {}).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].get_i32("total").ok(), Some(1));
    Ok(())
}
