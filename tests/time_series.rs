//! Native time-series collections: `sync_indexes` creates the collection a model declares
//! as one (`listCollections`, then `create` when it is missing), and says clearly, naming the
//! server's reply, when it cannot.

mod common;

use common::sent;
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::Error;

// ANCHOR: model
/// One recommendation event, kept as it happened: the server buckets them by book and time.
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
    user: i32,
}
// ANCHOR_END: model

/// A collection whose declared time-series options the server refuses (an unknown
/// granularity, which the derive would not accept: declared by hand here).
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "refused_series")]
struct Refused {
    #[serde(rename = "_id")]
    id: Option<ObjectId>,
    at: DateTime,
}

odm::__private::inventory::submit! {
    odm::__private::ModelEntry {
        type_name: "RefusedSeries",
        module: module_path!(),
        collection: "refused_series",
        time_series: Some(odm::__private::TimeSeriesEntry {
            collection: "refused_series",
            time: "at",
            meta: None,
            granularity: Some("fortnights"),
        }),
        ..odm::__private::ModelEntry::NONE
    }
}

async fn listed(db: &TestDb, name: &str) -> Option<Document> {
    let reply = db
        .raw()
        .run_command(doc! { "listCollections": 1, "filter": { "name": name } })
        .await
        .expect("listCollections");
    reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch")
        .first()
        .and_then(|d| d.as_document().cloned())
}

/// `sync_indexes` creates the declared time-series collection with its options before syncing
/// its indexes; a second sync finds it and creates nothing.
#[tokio::test]
async fn sync_creates_the_time_series_collection() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes_of::<RecEvent>().await?;
    assert_eq!(sent(&db), vec!["listCollections", "create", "listIndexes"]);
    let found = listed(&db, "rec_events").await.expect("created");
    assert_eq!(found.get_str("type").ok(), Some("timeseries"));
    let options = found
        .get_document("options")
        .and_then(|o| o.get_document("timeseries"))
        .expect("time-series options");
    assert_eq!(options.get_str("timeField").ok(), Some("at"));
    assert_eq!(options.get_str("metaField").ok(), Some("book"));
    assert_eq!(options.get_str("granularity").ok(), Some("minutes"));

    let events: Vec<RecEvent> = (0..5)
        .map(|i| RecEvent {
            id: None,
            at: DateTime::from_millis(1_349_999_940_000 + i * 1000),
            book: 1 + (i as i32 % 2),
            user: i as i32,
        })
        .collect();
    odm.insert_many(&events).await?;
    let read = odm.find(RecEvent::book().eq(1)).await?;
    assert_eq!(read.len(), 3);

    db.commands().clear();
    odm.sync_indexes_of::<RecEvent>().await?;
    assert_eq!(sent(&db), vec!["listCollections", "listIndexes"]);
    Ok(())
}

/// A collection that already exists as an ordinary one cannot be made a time-series
/// collection: a typed error naming it, and nothing changed.
#[tokio::test]
async fn an_ordinary_collection_in_the_way_is_a_typed_error() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .collection::<Document>("rec_events")
        .insert_one(doc! { "at": DateTime::now(), "book": 1, "user": 1 })
        .await
        .expect("raw insert");
    let err = db
        .odm()
        .sync_indexes_of::<RecEvent>()
        .await
        .expect_err("not a time-series collection");
    match &err {
        Error::TimeSeries {
            collection,
            message,
        } => {
            assert_eq!(collection, "rec_events");
            assert!(
                message.contains("exists as a `collection`, not a time-series collection"),
                "{err}"
            );
        }
        other => panic!("expected a time-series error, got {other}"),
    }
    assert_eq!(sent(&db), vec!["listCollections"]);
    let found = listed(&db, "rec_events").await.expect("still there");
    assert_eq!(found.get_str("type").ok(), Some("collection"));
    Ok(())
}

/// A time-series collection with other options than the declared ones is reported, not
/// changed.
#[tokio::test]
async fn other_time_series_options_are_a_typed_error() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .run_command(doc! {
            "create": "rec_events",
            "timeseries": { "timeField": "at", "metaField": "user", "granularity": "hours" },
        })
        .await
        .expect("raw create");
    let err = db
        .odm()
        .sync_indexes_of::<RecEvent>()
        .await
        .expect_err("other options");
    match &err {
        Error::TimeSeries {
            collection,
            message,
        } => {
            assert_eq!(collection, "rec_events");
            assert!(
                message.starts_with("it exists with the time-series options"),
                "{err}"
            );
            assert!(message.contains("\"metaField\": \"user\""), "{err}");
        }
        other => panic!("expected a time-series error, got {other}"),
    }
    assert_eq!(sent(&db), vec!["listCollections"]);
    Ok(())
}

/// The server's refusal of `create` is a typed error naming the collection and carrying the
/// server's reply (its message, code and code name). The development server supports
/// time-series collections, so the refusal is provoked with options it rejects, as a server
/// without them rejects the `timeseries` option itself; against a real MongoDB the same
/// options are refused the same way.
#[tokio::test]
async fn the_servers_refusal_is_a_typed_error_with_its_reply() -> odm::Result<()> {
    let db = common::db().await?;
    let err = db
        .odm()
        .sync_indexes_of::<Refused>()
        .await
        .expect_err("refused");
    match &err {
        Error::TimeSeries {
            collection,
            message,
        } => {
            assert_eq!(collection, "refused_series");
            assert!(
                message.starts_with("the server refused to create it: "),
                "{err}"
            );
            assert!(message.contains("(code "), "the server's code: {err}");
        }
        other => panic!("expected a time-series error, got {other}"),
    }
    assert_eq!(sent(&db), vec!["listCollections", "create"]);
    assert!(listed(&db, "refused_series").await.is_none());
    Ok(())
}
