//! `Find::stream` against a real server: typed results decoded from the cursor's batches, the
//! driver's batch size kept, populate a batch of parents at a time, the cursor killed when the
//! stream is dropped, bad documents in place, and the caller's session.

mod common;

use std::time::{Duration, Instant};

use futures_util::{StreamExt, TryStreamExt};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "writers")]
struct Writer {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "volumes")]
struct Volume {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference]
    writer: Ref<Writer>,
    #[reference]
    editor: Option<Ref<Writer>>,
}

/// `n` volumes `0..n`, volume `i` written by writer `i` (so that a batch's `$in` holds one id
/// per parent) and edited by writer `n + i % 7`; the log emptied.
async fn shelf(db: &TestDb, n: i32) -> odm::Result<()> {
    let writers: Vec<Writer> = (0..n + 7)
        .map(|id| Writer {
            id,
            name: format!("writer {id}"),
        })
        .collect();
    let volumes: Vec<Volume> = (0..n)
        .map(|id| Volume {
            id,
            title: format!("volume {id:05}"),
            writer: Ref::new(id),
            editor: Some(Ref::new(n + id % 7)),
        })
        .collect();
    db.odm().insert_many(&writers).await?;
    db.odm().insert_many(&volumes).await?;
    db.commands().clear();
    Ok(())
}

fn commands(db: &TestDb) -> Vec<(String, Document)> {
    db.commands()
        .take()
        .into_iter()
        .map(|c| (c.name, c.command.unwrap_or_default()))
        .collect()
}

/// The ids of a populate `find`'s `{_id: {$in: [...]}}`.
fn in_ids(command: &Document) -> Vec<Bson> {
    command
        .get_document("filter")
        .and_then(|f| f.get_document("_id"))
        .and_then(|f| f.get_array("$in"))
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn a_stream_decodes_each_document_as_the_cursor_reaches_it() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db, 1_000).await?;

    let mut volumes = db
        .odm()
        .find::<Volume>(Filter::all())
        .sort(Volume::title().asc())
        .batch_size(100)
        .stream();
    // Nothing is sent before the stream is polled.
    assert!(commands(&db).is_empty());
    let mut seen = Vec::new();
    while let Some(volume) = volumes.try_next().await? {
        seen.push(volume.id);
        if seen.len() == 150 {
            // 150 documents in: the first batch and one `getMore`, not the whole result.
            let sent = commands(&db);
            let names: Vec<_> = sent.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["find", "getMore"]);
            assert_eq!(sent[0].1.get_i32("batchSize").ok(), Some(100));
            assert_eq!(sent[1].1.get_i32("batchSize").ok(), Some(100));
        }
    }
    assert_eq!(seen, (0..1_000).collect::<Vec<_>>());
    let rest = commands(&db);
    assert!(rest.iter().all(|(n, _)| n == "getMore"), "{rest:?}");
    assert!((8..=9).contains(&rest.len()), "{} getMores", rest.len());
    Ok(())
}

#[tokio::test]
async fn a_populated_stream_sends_one_in_per_batch_and_relation() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db, 5_000).await?;

    let mut volumes = db
        .odm()
        .find::<Volume>(Filter::all())
        .sort(Volume::title().asc())
        .populate(Volume::writer())
        .populate(Volume::editor())
        .batch_size(250)
        .stream();
    let mut n = 0;
    while let Some(volume) = volumes.try_next().await? {
        assert_eq!(volume.id, n);
        assert_eq!(volume.writer.loaded()?.name, format!("writer {n}"));
        let editor = volume.editor.as_ref().map(|e| e.loaded().map(|w| w.id));
        assert_eq!(editor.transpose()?, Some(5_000 + n % 7));
        n += 1;
        if n % 250 == 1 {
            // The first document of a batch: that batch read and populated, no more.
            let batch = (n / 250) as usize;
            let sent = commands(&db);
            let on = |coll: &str| -> Vec<(String, Document)> {
                sent.iter()
                    .filter(|(_, c)| {
                        c.get_str("find").ok() == Some(coll)
                            || c.get_str("collection").ok() == Some(coll)
                    })
                    .cloned()
                    .collect()
            };
            let read: Vec<_> = on("volumes").into_iter().map(|(n, _)| n).collect();
            assert_eq!(read, [if batch == 0 { "find" } else { "getMore" }]);
            // One `$in` per relation; the parents held at once are the batch: the writers'
            // `$in` has one id per parent, 250 (the editors', their 7 distinct ids).
            let populates: Vec<usize> = on("writers")
                .iter()
                .filter(|(n, _)| n == "find")
                .map(|(_, c)| in_ids(c).len())
                .collect();
            assert_eq!(populates, [250, 7], "batch {batch}");
        }
    }
    assert_eq!(n, 5_000);
    let rest: Vec<_> = commands(&db).into_iter().map(|(n, _)| n).collect();
    assert!(rest.iter().all(|n| n == "getMore"), "{rest:?}");
    Ok(())
}

#[tokio::test]
async fn a_populated_stream_takes_batches_of_100_by_default() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db, 1_000).await?;

    let volumes: Vec<Volume> = db
        .odm()
        .find::<Volume>(Filter::all())
        .populate(Volume::writer())
        .stream()
        .try_collect()
        .await?;
    assert_eq!(volumes.len(), 1_000);
    assert!(volumes.iter().all(|v| v.writer.is_loaded()));
    let sent = commands(&db);
    assert_eq!(sent[0].1.get_i32("batchSize").ok(), Some(100));
    let populates: Vec<_> = sent
        .iter()
        .filter(|(n, c)| n == "find" && c.get_str("find").ok() == Some("writers"))
        .map(|(_, c)| in_ids(c).len())
        .collect();
    assert_eq!(populates, [100; 10]);
    Ok(())
}

/// Waits for the driver's `killCursors` (sent from the cursor's `Drop`, in a task).
async fn killed_cursor(db: &TestDb) -> Option<Document> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        let sent = commands(db);
        if let Some((_, c)) = sent.into_iter().find(|(n, _)| n == "killCursors") {
            return Some(c);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test]
async fn dropping_a_stream_kills_its_cursor() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db, 500).await?;

    let mut volumes = db
        .odm()
        .find::<Volume>(Filter::all())
        .batch_size(50)
        .populate(Volume::writer())
        .stream();
    for _ in 0..60 {
        volumes.try_next().await?;
    }
    let sent = commands(&db);
    let cursor = sent
        .iter()
        .find(|(n, _)| n == "getMore")
        .and_then(|(_, c)| c.get_i64("getMore").ok())
        .expect("a getMore naming the cursor");
    drop(volumes);
    let killed = killed_cursor(&db)
        .await
        .expect("killCursors after the drop");
    assert_eq!(killed.get_str("killCursors").ok(), Some("volumes"));
    assert_eq!(
        killed.get_array("cursors").ok().cloned(),
        Some(vec![Bson::Int64(cursor)])
    );

    // In a session too: the session's cursor is killed.
    let mut session = db.odm().start_session().await?;
    let mut volumes = db
        .odm()
        .find::<Volume>(Filter::all())
        .batch_size(50)
        .session(&mut session)
        .stream();
    for _ in 0..60 {
        volumes.try_next().await?;
    }
    let sent = commands(&db);
    let (_, more) = sent
        .iter()
        .find(|(n, _)| n == "getMore")
        .expect("a getMore in the session");
    assert!(more.get_document("lsid").is_ok(), "{more}");
    let cursor = more.get_i64("getMore").expect("the cursor id");
    drop(volumes);
    let killed = killed_cursor(&db)
        .await
        .expect("killCursors after the drop");
    assert_eq!(
        killed.get_array("cursors").ok().cloned(),
        Some(vec![Bson::Int64(cursor)])
    );
    Ok(())
}

#[tokio::test]
async fn a_bad_document_is_an_error_in_its_place_and_the_stream_goes_on() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db, 300).await?;
    db.raw()
        .collection::<Document>("volumes")
        .update_one(doc! {"_id": 150}, doc! {"$set": {"title": 42}})
        .await?;

    for populated in [false, true] {
        let find = db.odm().find::<Volume>(Filter::all()).batch_size(100);
        let find = match populated {
            true => find.populate(Volume::writer()),
            false => find,
        };
        let items: Vec<odm::Result<Volume>> = find.stream().collect().await;
        assert_eq!(items.len(), 300);
        for (i, item) in items.iter().enumerate() {
            match item {
                Ok(v) => {
                    assert_eq!(v.id, i as i32);
                    assert_eq!(v.writer.is_loaded(), populated);
                }
                Err(odm::Error::Decode {
                    collection,
                    id,
                    path,
                    ..
                }) if i == 150 => {
                    assert_eq!(
                        (collection.as_str(), id.as_str()),
                        ("volumes", "{ _id: 150 }")
                    );
                    assert_eq!(path, "title");
                }
                Err(e) => panic!("item {i}: {e}"),
            }
        }
    }
    // `try_collect` (or `?` on `try_next`) stops at the first.
    let stopped: odm::Result<Vec<Volume>> =
        db.odm().find(Filter::all()).stream().try_collect().await;
    assert!(matches!(stopped, Err(odm::Error::Decode { .. })));
    Ok(())
}

#[tokio::test]
async fn a_stream_in_a_session_reads_in_its_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db, 120).await?;

    let mut session = db.odm().start_session().await?;
    session.start_transaction().await?;
    let late = Volume {
        id: 999,
        title: "volume late".into(),
        writer: Ref::new(3),
        editor: None,
    };
    db.odm().insert_one(&late).session(&mut session).await?;
    db.commands().clear();

    let volumes: Vec<Volume> = db
        .odm()
        .find::<Volume>(Filter::all())
        .sort(Volume::title().asc())
        .batch_size(50)
        .populate(Volume::writer())
        .session(&mut session)
        .stream()
        .try_collect()
        .await?;
    assert_eq!(volumes.len(), 121);
    assert_eq!(volumes[120].writer.loaded()?.id, 3);
    // Every command (the find, its getMores, the populates) ran in the transaction.
    let sent = commands(&db);
    assert!(sent.len() >= 6, "{sent:?}");
    for (name, command) in &sent {
        assert!(command.get_document("lsid").is_ok(), "{name} without lsid");
        assert!(
            command.contains_key("txnNumber"),
            "{name} outside the transaction"
        );
    }
    // Outside the session, the uncommitted volume is not there.
    let outside: Vec<Volume> = db.odm().find(Filter::all()).stream().try_collect().await?;
    assert_eq!(outside.len(), 120);
    session.abort_transaction().await?;
    assert_eq!(common::stored(&db, "volumes").await.len(), 120);
    Ok(())
}

/// A volume's title alone: the view a listing streams.
#[derive(Deserialize, Debug, PartialEq)]
struct Title {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
}

#[tokio::test]
async fn a_view_streams_decoded_into_its_type_with_its_projection() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db, 250).await?;
    db.raw()
        .collection::<Document>("volumes")
        .update_one(doc! {"_id": 7}, doc! {"$set": {"title": 42}})
        .await?;

    // ANCHOR: view_stream
    let items: Vec<odm::Result<Title>> = db
        .odm()
        .find::<Volume>(Filter::all())
        .projection(Projection::include(&Volume::title()))
        .batch_size(100)
        .into_type::<Title>()
        .stream()
        .collect()
        .await;
    // ANCHOR_END: view_stream
    assert_eq!(items.len(), 250);
    for (i, item) in items.iter().enumerate() {
        match item {
            Ok(t) => assert_eq!(
                t,
                &Title {
                    id: i as i32,
                    title: format!("volume {i:05}")
                }
            ),
            // A stored document the view cannot read is an error in its place, naming it.
            Err(odm::Error::Decode {
                collection, path, ..
            }) if i == 7 => {
                assert_eq!((collection.as_str(), path.as_str()), ("volumes", "title"));
            }
            Err(e) => panic!("item {i}: {e}"),
        }
    }
    // One `find` and two `getMore`s of 100, the projection sent, nothing populated.
    let sent = commands(&db);
    let names: Vec<&str> = sent.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["find", "getMore", "getMore"]);
    assert_eq!(
        sent[0].1.get_document("projection").ok(),
        Some(&doc! {"title": 1})
    );
    Ok(())
}
