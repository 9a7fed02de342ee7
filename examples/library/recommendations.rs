//! The library's recommendations, counted (the workshop's exercises 5 and 6): per book and
//! day, a document with the day's total, each hour's and each minute's, updated by one upsert
//! per recommendation; the recommendation events themselves in a native time-series
//! collection; and each user's quota of ten recommendations, kept in a document of its own.
//!
//! Every step prints what it did and the commands it sent.
//!
//! Part of the library example (`cargo run -p odm-examples --example library`), whose steps
//! it continues, in a database of its own.

use crate::common::{list, say, say_lines, Steps};
use odm::bson::{doc, DateTime, Document};
use odm::counters::{Hours, Quota, Taken};
use odm::prelude::*;

// ANCHOR: rec_ts
/// A book's recommendations of one day (the seed's `rec_ts`, solution B): the day's total, and
/// per hour a sub-document with the hour's total and the count of each of its minutes.
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
// ANCHOR_END: rec_ts

// ANCHOR: rec_events
/// Each recommendation as it happened, in a time-series collection the server buckets by book.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "rec_events",
    time_series(time = "at", meta = "book", granularity = "minutes")
)]
struct RecEvent {
    #[serde(rename = "_id")]
    id: Option<ObjectId>,
    at: DateTime,
    book: i32,
    user: String,
}
// ANCHOR_END: rec_events

// ANCHOR: user_recs
/// What a user may still recommend (the seed's `user_recs`, exercise 6).
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "user_recs")]
struct UserRecs {
    #[serde(rename = "_id")]
    id: String,
    remaining: i32,
    books: Vec<i32>,
}
// ANCHOR_END: user_recs

fn at(rfc3339: &str) -> DateTime {
    DateTime::parse_rfc3339_str(rfc3339).expect("a valid date")
}

pub async fn run(library: &Odm, steps: &Steps) -> odm::Result<()> {
    let odm = crate::common::part(library, "recommendations");
    let gatsby = 1;
    let paradise = 3;

    steps.start("Create the indexes, and the time-series collection");
    // ANCHOR: sync
    let report = odm
        .sync_indexes_of::<BookRecs>()
        .and::<RecEvent>()
        .and::<UserRecs>()
        .await?;
    // ANCHOR_END: sync
    say_lines(&report);
    steps.sent();

    steps.start("Record a recommendation created one minute before midnight");
    // ANCHOR: record
    let counters = odm.counters::<BookRecs>();
    counters.record(gatsby, at("2012-10-11T23:59:42Z")).await?;
    // ANCHOR_END: record
    steps.sent();

    steps.start("Record the rest of the day: one update each");
    let day: Vec<(i32, &str)> = vec![
        (gatsby, "2012-10-11T00:00:12Z"),
        (gatsby, "2012-10-11T00:00:48Z"),
        (gatsby, "2012-10-11T09:30:00Z"),
        (gatsby, "2012-10-11T23:59:59Z"),
        (paradise, "2012-10-11T09:31:00Z"),
    ];
    for (book, when) in &day {
        counters.record(*book, at(when)).await?;
    }
    counters.record(gatsby, at("2012-10-12T08:00:00Z")).await?;
    steps.sent();

    steps.start("Read a book's day");
    // ANCHOR: read_day
    let oct_11 = counters
        .day(gatsby, at("2012-10-11T00:00:00Z"))
        .await?
        .expect("recorded above");
    // ANCHOR_END: read_day
    say(format_args!(
        "{} recommendations on 2012-10-11; hour 23: {}, minute 1439: {}, minute 0: {}",
        oct_11.total,
        oct_11.hour.total_of(23),
        oct_11.hour.minute(1439),
        oct_11.hour.minute(0)
    ));
    steps.sent();
    let stored: Document = odm
        .database()
        .collection::<Document>("rec_ts")
        .find_one(doc! { "book": gatsby, "day": at("2012-10-11T00:00:00Z") })
        .projection(doc! { "_id": 0 })
        .await?
        .expect("recorded above");
    say(format_args!("stored: {}", steps.show(&stored.into())));

    steps.start("Read one hour: only that hour is sent back");
    // ANCHOR: read_hour
    let hour = counters.hour(gatsby, at("2012-10-11T23:00:00Z")).await?;
    // ANCHOR_END: read_hour
    list(
        "hour 23, by minute",
        hour.minutes().map(|(m, n)| format!("{m}: {n}")),
    );
    steps.sent();

    steps.start("Read a range of days");
    // ANCHOR: read_days
    let days = counters
        .days(
            gatsby,
            at("2012-10-10T00:00:00Z"),
            at("2012-10-12T00:00:00Z"),
        )
        .await?;
    // ANCHOR_END: read_days
    list(
        "per day",
        days.iter().map(|d| {
            let date = d.day.try_to_rfc3339_string().unwrap_or_default();
            format!("{}: {}", &date[..10], d.total)
        }),
    );
    steps.sent();

    steps.start("Pre-allocate tomorrow's document, twice: created once");
    // ANCHOR: preallocate
    let created = counters
        .preallocate(paradise, at("2012-10-12T00:00:00Z"))
        .await?;
    let again = counters
        .preallocate(paradise, at("2012-10-12T00:00:00Z"))
        .await?;
    assert!(created && !again);
    // ANCHOR_END: preallocate
    say(format_args!("created: {created}, then: {again}"));
    steps.sent();

    steps.start("Keep the events themselves in the time-series collection");
    // ANCHOR: events
    let events: Vec<RecEvent> = [
        ("bob", "2012-10-11T23:59:42Z"),
        ("kate", "2012-10-11T09:30:00Z"),
    ]
    .into_iter()
    .map(|(user, when)| RecEvent {
        id: None,
        at: at(when),
        book: gatsby,
        user: user.into(),
    })
    .collect();
    odm.insert_many(&events).await?;
    let late = odm
        .find(RecEvent::book().eq(gatsby) & RecEvent::at().gte(at("2012-10-11T12:00:00Z")))
        .await?;
    // ANCHOR_END: events
    list("after noon", late.iter().map(|e| &e.user));
    steps.sent();

    steps.start("Each user may recommend 10 books: bob has 8 left, kate none");
    odm.insert_many(&[
        UserRecs {
            id: "bob".into(),
            remaining: 8,
            books: vec![3, 10],
        },
        UserRecs {
            id: "kate".into(),
            remaining: 0,
            books: (1..=10).collect(),
        },
    ])
    .await?;
    steps.sent();

    steps.start("bob recommends book 4: one conditional update");
    // ANCHOR: quota
    let recommendations = Quota::new(UserRecs::remaining(), UserRecs::books());
    let taken = recommendations.take(&odm, "bob", 4).await?;
    assert_eq!(taken, Taken::Taken);
    // ANCHOR_END: quota
    steps.sent();
    let bob = odm.get::<UserRecs>("bob").await?.expect("inserted above");
    say(format_args!(
        "{taken:?}: bob has {} left and recommended {:?}",
        bob.remaining, bob.books
    ));

    steps.start("bob recommends book 4 again, kate recommends an eleventh: both refused");
    // ANCHOR: quota_refused
    let again = recommendations.take(&odm, "bob", 4).await?;
    let eleventh = recommendations.take(&odm, "kate", 11).await?;
    assert_eq!((again, eleventh), (Taken::AlreadyGiven, Taken::Exhausted));
    // ANCHOR_END: quota_refused
    say(format_args!("bob: {again:?}, kate: {eleventh:?}"));
    steps.sent();

    crate::common::drop_database(&odm).await
}
