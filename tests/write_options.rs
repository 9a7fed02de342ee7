//! The options of a write's own command besides its concern: `comment`, sent with it and
//! read from the monitor; `bypass_document_validation`, which stores what the collection's
//! validator refuses; `let_vars`, the variables of its `$expr`s, refused before sending on a
//! write the ODM maintains (its own commands would read the filter without them).

mod common;

use common::{last_command, sent, stored};
use odm::bson::{doc, Document};
use odm::prelude::*;

/// A reading of a meter: a model nothing maintains.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "option_meters")]
struct Meter {
    #[serde(rename = "_id")]
    id: i32,
    reading: i64,
}

/// A model the ODM maintains (its deletes are soft).
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "option_accounts", soft_delete)]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
    balance: i64,
    deleted_at: Option<odm::bson::DateTime>,
}

fn meter(id: i32, reading: i64) -> Meter {
    Meter { id, reading }
}

#[tokio::test]
async fn a_comment_goes_with_each_write_command() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    // ANCHOR: comment
    odm.insert_one(&meter(1, 5))
        .comment("nightly import")
        .await?;
    // ANCHOR_END: comment
    assert_eq!(
        last_command(&db, "insert").get_str("comment").ok(),
        Some("nightly import")
    );
    odm.update_one(Meter::id_field().eq(1), Meter::reading().inc(1))
        .comment("nightly import")
        .await?;
    assert_eq!(
        last_command(&db, "update").get_str("comment").ok(),
        Some("nightly import")
    );
    odm.insert_many(&[meter(2, 0), meter(3, 0)])
        .comment("batch 2")
        .await?;
    assert_eq!(
        last_command(&db, "insert").get_str("comment").ok(),
        Some("batch 2")
    );
    odm.replace_one(&meter(2, 9)).comment("fix 2").await?;
    assert_eq!(
        last_command(&db, "update").get_str("comment").ok(),
        Some("fix 2")
    );
    odm.delete_one(Meter::id_field().eq(3))
        .comment("drop 3")
        .await?;
    assert_eq!(
        last_command(&db, "delete").get_str("comment").ok(),
        Some("drop 3")
    );
    let readings: Vec<(i32, i64)> = stored(&db, "option_meters")
        .await
        .iter()
        .map(|d| (d.get_i32("_id").unwrap(), d.get_i64("reading").unwrap()))
        .collect();
    assert_eq!(readings, [(1, 6), (2, 9)]);
    odm.find_one_and_update(Meter::id_field().eq(1), Meter::reading().inc(1))
        .comment("take 1")
        .await?;
    assert_eq!(
        last_command(&db, "findAndModify").get_str("comment").ok(),
        Some("take 1")
    );
    // Without one, none is sent.
    odm.insert_one(&meter(4, 0)).await?;
    assert!(!last_command(&db, "insert").contains_key("comment"));
    Ok(())
}

#[tokio::test]
async fn bypassing_validation_stores_what_the_validator_refuses() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .create_collection("option_meters")
        .validator(doc! { "reading": { "$gte": 0 } })
        .await
        .unwrap();
    let odm = db.odm();
    let refused = odm.insert_one(&meter(1, -5)).await.unwrap_err();
    assert!(
        matches!(refused, odm::Error::DocumentInvalid { .. }),
        "{refused:?}"
    );
    // ANCHOR: bypass
    odm.insert_one(&meter(1, -5))
        .bypass_document_validation(true)
        .await?;
    // ANCHOR_END: bypass
    assert_eq!(
        last_command(&db, "insert")
            .get_bool("bypassDocumentValidation")
            .ok(),
        Some(true)
    );
    odm.update_one(Meter::id_field().eq(1), Meter::reading().inc(-1))
        .bypass_document_validation(true)
        .await?;
    let stored = stored(&db, "option_meters").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].get_i64("reading").unwrap(), -6);
    Ok(())
}

#[tokio::test]
async fn let_variables_reach_the_filter_and_are_refused_on_a_maintained_write() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&[meter(1, 5), meter(2, 15), meter(3, 25)])
        .await?;
    // ANCHOR: let
    let over = Filter::raw(doc! { "$expr": { "$gt": ["$reading", "$$limit"] } });
    let updated = odm
        .update_many(over, Meter::reading().set(0))
        .let_vars(doc! { "limit": 10 })
        .await?;
    // ANCHOR_END: let
    assert_eq!(updated.modified_count, 2);
    assert_eq!(
        last_command(&db, "update").get_document("let").ok(),
        Some(&doc! { "limit": 10 })
    );
    let readings: Vec<i64> = stored(&db, "option_meters")
        .await
        .iter()
        .map(|d| d.get_i64("reading").unwrap())
        .collect();
    assert_eq!(readings, [5, 0, 0]);
    let deleted = odm
        .delete_many(Filter::<Meter>::raw(
            doc! { "$expr": { "$eq": ["$reading", "$$zero"] } },
        ))
        .let_vars(doc! { "zero": 0 })
        .await?;
    assert_eq!(deleted, 2);

    odm.insert_one(&Account {
        id: 1,
        balance: 5,
        deleted_at: None,
    })
    .await?;
    db.commands().clear();
    let refused = odm
        .delete_many(Filter::<Account>::raw(
            doc! { "$expr": { "$lt": ["$balance", "$$min"] } },
        ))
        .let_vars(doc! { "min": 10 })
        .await
        .unwrap_err();
    assert!(matches!(refused, odm::Error::Unsupported(_)), "{refused:?}");
    assert!(sent(&db).is_empty(), "{:?}", sent(&db));
    let account = db
        .raw()
        .collection::<Document>("option_accounts")
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(account.get("deleted_at"), Some(&odm::bson::Bson::Null));
    Ok(())
}
