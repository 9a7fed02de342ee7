//! What the follower reports instead of failing or hiding: the holders a `restrict` rule
//! finds, named; a holder a copy would push past 16 MB; a latest-N source of the wrong type;
//! and the lease given back when the run fails.

use std::time::Duration;

use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;

use super::common;
use super::gaps::other_program;
use super::models::Host;

fn sorted(mut ids: Vec<Bson>) -> Vec<i64> {
    let mut out: Vec<i64> = ids.drain(..).filter_map(|b| b.as_i64()).collect();
    out.sort_unstable();
    out
}

/// Another program deletes three parts that nine audits (`restrict`) still reference: the
/// report names the deleted parts and the holders, as well as counting them.
#[tokio::test]
async fn a_broken_restrict_rule_names_the_deleted_and_the_holders() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("parts")
        .insert_many((1..=4_i64).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    raw("audits")
        .insert_many(
            (1..=10_i64)
                .map(|i| doc! { "_id": i, "part": if i == 10 { 4 } else { (i - 1) / 3 + 1 } }),
        )
        .await
        .expect("raw");
    super::started(&db).await?;
    raw("parts")
        .delete_many(doc! { "_id": { "$in": [1_i64, 2_i64, 3_i64] } })
        .await
        .expect("raw delete");
    let report = super::follow(&db).await?;
    assert_eq!(report.violations.len(), 1, "{:?}", report.violations);
    let v = &report.violations[0];
    assert_eq!((v.referenced_by.as_str(), v.count), ("audits", 9));
    assert_eq!(sorted(v.deleted().to_vec()), [1, 2, 3], "{v:?}");
    assert_eq!(
        sorted(v.holders().to_vec()),
        (1..=9).collect::<Vec<_>>(),
        "{v:?}"
    );
    // Left as they are: a restrict rule cannot refuse what is done.
    assert_eq!(super::stored(&db, "audits").await.len(), 10);
    Ok(())
}

/// Another program renames 17 parts to names of 1 MB each: the product holding the summaries
/// of all of them cannot take the last (it would pass 16 MB). It is reported, the other
/// holder gets its copy, and the follower goes on: nothing is left behind it.
#[tokio::test]
async fn a_holder_a_copy_would_push_past_16_mb_is_reported() -> odm::Result<()> {
    const PARTS: i64 = 17;
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("parts")
        .insert_many((1..=PARTS).map(|i| doc! { "_id": i, "name": format!("part {i}") }))
        .await
        .expect("raw");
    let all: Vec<Document> = (1..=PARTS)
        .map(|i| doc! { "id": i, "name": format!("part {i}") })
        .collect();
    raw("products")
        .insert_many([
            doc! { "_id": 1_i64, "parts": all },
            doc! { "_id": 2_i64, "parts": [{ "id": PARTS, "name": format!("part {PARTS}") }] },
        ])
        .await
        .expect("raw");
    super::started(&db).await?;
    for i in 1..=PARTS {
        let name = format!("{i:02}{}", "n".repeat(1_000_000));
        raw("parts")
            .update_one(doc! { "_id": i }, doc! { "$set": { "name": name } })
            .await
            .expect("raw rename");
    }
    let report = super::follow(&db).await?;
    let bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    assert_eq!(bad, [("products", "{ _id: 1 }", "parts")], "{report:?}");
    assert!(
        report.bad_documents[0].message.contains("10334"),
        "{}",
        report.bad_documents[0]
    );
    // The other holder got its copy, product 1 all but the one it could not hold.
    let names: Vec<(i64, String)> = super::stored(&db, "parts")
        .await
        .iter()
        .map(|p| {
            (
                p.get_i64("_id").unwrap(),
                p.get_str("name").unwrap().to_owned(),
            )
        })
        .collect();
    let stale: Vec<(i64, usize)> = super::stored(&db, "products")
        .await
        .iter()
        .map(|p| {
            let n = p.get_array("parts").unwrap().iter().filter(|s| {
                let s = s.as_document().unwrap();
                !names.contains(&(
                    s.get_i64("id").unwrap(),
                    s.get_str("name").unwrap().to_owned(),
                ))
            });
            (p.get_i64("_id").unwrap(), n.count())
        })
        .collect();
    assert_eq!(stale, [(1, 1), (2, 0)]);
    assert_eq!(db.odm().follower_status().await?.behind, 0);
    let next = super::follow(&db).await?;
    assert_eq!(next.events, 0, "{next:?}");
    Ok(())
}

/// Another program inserts a log message whose `text` is a document where the host's summary
/// holds a `String`: nothing of it is copied, it is reported, and the host can still be read.
#[tokio::test]
async fn a_latest_source_of_the_wrong_type_is_reported_and_not_copied() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    let at = |s: i64| DateTime::from_millis(1_700_000_000_000 + s * 1000);
    raw("hosts")
        .insert_one(doc! { "_id": 1_i64, "recent": [] })
        .await
        .expect("raw");
    raw("logmsgs")
        .insert_many(
            (1..=3_i64)
                .map(|i| doc! { "_id": i, "time": at(i), "text": format!("m{i}"), "host": 1_i64 }),
        )
        .await
        .expect("raw");
    super::started(&db).await?;
    raw("logmsgs")
        .insert_one(
            doc! { "_id": 4_i64, "time": at(4), "text": { "html": "<b>m4</b>" }, "host": 1_i64 },
        )
        .await
        .expect("raw");
    let report = super::follow(&db).await?;
    let bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    assert_eq!(bad, [("logmsgs", "{ _id: 4 }", "text")], "{report:?}");
    // The latest three the host can hold, the message of the wrong type left out.
    assert_eq!(super::recent_ids(&db, 1).await, [3, 2, 1]);
    let hosts = db.odm().find::<Host>(Filter::all()).await?;
    assert_eq!(hosts.len(), 1);
    Ok(())
}

/// A follower that fails on a standalone server (no change streams) gives its lease back: the
/// next one fails the same way rather than being told another follower holds it, and no
/// holder is named.
#[tokio::test]
async fn a_follower_that_fails_gives_its_lease_back() -> odm::Result<()> {
    let server = common::Standalone::start();
    let odm = odm::Odm::connect(&server.uri, "standalone_lease")
        .await?
        .with_catalog(common::catalog());
    let mut first = odm.follower().max_wait(Duration::from_millis(50));
    let outcome = first.run_until_idle().await;
    assert!(
        matches!(outcome, Err(odm::Error::ChangeStreamsUnavailable { .. })),
        "{outcome:?}"
    );
    assert_eq!(odm.follower_status().await?.holder, None);
    let mut second = odm.follower().max_wait(Duration::from_millis(50));
    let outcome = second.run_until_idle().await;
    assert!(
        matches!(outcome, Err(odm::Error::ChangeStreamsUnavailable { .. })),
        "{outcome:?}"
    );
    Ok(())
}
