//! The index kinds and options a field or a model declares (`kind`, `collation`, `hidden`,
//! `partial`): each created by `sync_indexes` as declared (read back with `listIndexes`),
//! compared by the next sync (nothing to change), and doing what it says on the server.

mod common;

use common::listed_indexes;
use odm::bson::{doc, Document};
use odm::prelude::*;

// ANCHOR: account
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(
    collection = "accounts",
    index(
        keys = "team, handle",
        unique,
        partial(status = "active"),
        name = "active_handles"
    )
)]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
    /// Unique without case: `Ann@x.org` and `ann@x.org` are one email.
    #[index(unique, collation(locale = "en", strength = 2))]
    email: String,
    /// A GeoJSON point.
    #[index(kind = "2dsphere")]
    home: Document,
    team: String,
    #[index(hidden)]
    nickname: String,
    #[index(kind = "wildcard")]
    attrs: Document,
    handle: String,
    status: String,
}
// ANCHOR_END: account

fn account(id: i32, email: &str, handle: &str, status: &str) -> Account {
    Account {
        id,
        email: email.to_owned(),
        home: doc! { "type": "Point", "coordinates": [2.35, 48.85] },
        team: "core".to_owned(),
        nickname: format!("n{id}"),
        attrs: doc! { "plan": "free" },
        handle: handle.to_owned(),
        status: status.to_owned(),
    }
}

/// The listed index named `name`.
fn named<'a>(indexes: &'a [Document], name: &str) -> &'a Document {
    indexes
        .iter()
        .find(|i| i.get_str("name").ok() == Some(name))
        .unwrap_or_else(|| panic!("no index {name} in {indexes:?}"))
}

#[tokio::test]
async fn each_kind_and_option_is_created_as_declared_and_synced_once() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Account>().await?;
    let listed = listed_indexes(&db, "accounts").await;

    let email = named(&listed, "email_1");
    assert_eq!(email.get_bool("unique").ok(), Some(true));
    let collation = email.get_document("collation").unwrap();
    assert_eq!(collation.get_str("locale").ok(), Some("en"));
    assert_eq!(collation.get_i32("strength").ok(), Some(2));
    assert_eq!(
        named(&listed, "home_2dsphere")
            .get_document("key")
            .unwrap()
            .get_str("home")
            .ok(),
        Some("2dsphere")
    );
    assert_eq!(
        named(&listed, "nickname_1").get_bool("hidden").ok(),
        Some(true)
    );
    assert!(named(&listed, "attrs.$**_1")
        .get_document("key")
        .unwrap()
        .contains_key("attrs.$**"));
    let active = named(&listed, "active_handles");
    assert_eq!(
        active.get_document("partialFilterExpression").unwrap(),
        &doc! { "status": "active" }
    );

    // The next sync finds every index as declared: nothing created, nothing differing.
    db.commands().clear();
    let report = db.odm().sync_indexes_of::<Account>().await?;
    assert!(report.is_in_sync(), "{report:?}");
    assert!(report.created().is_empty(), "{report:?}");
    assert_eq!(db.commands().count_of("createIndexes"), 0);
    Ok(())
}

/// A model sharded elsewhere by its team, found here by equality on it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "squads")]
struct Squad {
    #[serde(rename = "_id")]
    id: i32,
    #[index(kind = "hashed")]
    team: String,
}

#[tokio::test]
async fn a_hashed_index_is_sent_hashed() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .insert_one(&Squad {
            id: 1,
            team: "core".into(),
        })
        .await?;
    db.commands().clear();
    // The development server builds no hashed index outside a shard key yet: the report then
    // names the index and the server's reason, and a real MongoDB builds it.
    let report = match db.odm().sync_indexes_of::<Squad>().await {
        Ok(report) => report,
        Err(odm::Error::IndexSync(report)) => *report,
        Err(e) => return Err(e),
    };
    let create = common::last_command(&db, "createIndexes");
    let sent = create.get_array("indexes").unwrap()[0]
        .as_document()
        .unwrap();
    assert_eq!(sent.get_str("name").ok(), Some("team_hashed"));
    assert_eq!(
        sent.get_document("key").unwrap(),
        &doc! { "team": "hashed" }
    );
    let listed = listed_indexes(&db, "squads").await;
    let built = listed
        .iter()
        .any(|i| i.get_str("name").ok() == Some("team_hashed"));
    let refused = report.failures().iter().any(|f| f.contains("team_hashed"));
    assert!(built != refused, "{report:?}");
    Ok(())
}

#[tokio::test]
async fn a_unique_index_without_case_refuses_the_same_email_in_other_letters() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Account>().await?;
    db.odm()
        .insert_one(&account(1, "ann@x.org", "ann", "active"))
        .await?;
    let again = db
        .odm()
        .insert_one(&account(2, "Ann@X.org", "ann2", "active"))
        .await;
    assert!(
        matches!(again, Err(odm::Error::DuplicateKey { .. })),
        "{again:?}"
    );
    assert_eq!(common::stored(&db, "accounts").await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_partial_unique_index_holds_only_the_documents_it_selects() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Account>().await?;
    // Two closed accounts may share a handle; two active ones may not.
    db.odm()
        .insert_many([
            &account(1, "a@x.org", "ann", "closed"),
            &account(2, "b@x.org", "ann", "closed"),
            &account(3, "c@x.org", "ann", "active"),
        ])
        .await?;
    let again = db
        .odm()
        .insert_one(&account(4, "d@x.org", "ann", "active"))
        .await;
    assert!(
        matches!(again, Err(odm::Error::DuplicateKey { .. })),
        "{again:?}"
    );
    assert_eq!(common::stored(&db, "accounts").await.len(), 3);
    Ok(())
}
