//! The driver's options on the read builders: each one in the command sent (the command
//! monitor), and its effect on what comes back (read with the raw driver beside).

mod common;

use std::time::Duration;

use common::last_command;
use odm::bson::{doc, Bson};
use odm::options::{Collation, CollationStrength, Hint, ReadConcern, ReadPreference};
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "members")]
struct Member {
    #[serde(rename = "_id")]
    id: i32,
    #[index]
    email: String,
    name: String,
}

fn member(id: i32, email: &str, name: &str) -> Member {
    Member {
        id,
        email: email.to_owned(),
        name: name.to_owned(),
    }
}

/// Strings compared without case (`strength: 2`).
fn case_insensitive() -> Collation {
    Collation::builder()
        .locale("en")
        .strength(CollationStrength::Secondary)
        .build()
}

/// The strength of the collation a command carries.
fn strength(command: &odm::bson::Document) -> i32 {
    command
        .get_document("collation")
        .and_then(|c| c.get_i32("strength"))
        .unwrap_or_else(|_| panic!("no collation strength in {command}"))
}

async fn members() -> odm::Result<odm::testing::TestDb> {
    let db = common::db().await?;
    db.odm()
        .insert_many(&[
            member(1, "Ann@X.org", "Ann"),
            member(2, "bob@x.org", "Bob"),
            member(3, "cy@x.org", "Cy"),
        ])
        .await?;
    db.odm().sync_indexes().await?;
    db.commands().take();
    Ok(db)
}

#[tokio::test]
async fn a_find_sends_the_options_it_was_given() -> odm::Result<()> {
    let db = members().await?;
    let found = db
        .odm()
        .find(Member::name().eq("Bob"))
        .comment("report-17")
        .hint(Hint::Name("email_1".to_owned()))
        .max_time(Duration::from_millis(5_000))
        .read_concern(ReadConcern::majority())
        .read_preference(ReadPreference::Primary)
        .allow_disk_use(true)
        .await?;
    assert_eq!(found, [member(2, "bob@x.org", "Bob")]);
    let find = last_command(&db, "find");
    assert_eq!(find.get_str("comment").unwrap(), "report-17");
    assert_eq!(find.get_str("hint").unwrap(), "email_1");
    let max_time = match find.get("maxTimeMS") {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        other => panic!("maxTimeMS: {other:?}"),
    };
    assert_eq!(max_time, 5_000);
    assert_eq!(
        find.get_document("readConcern").unwrap(),
        &doc! { "level": "majority" }
    );
    assert!(find.get_bool("allowDiskUse").unwrap());
    Ok(())
}

#[tokio::test]
async fn a_collation_matches_without_case() -> odm::Result<()> {
    let db = members().await?;
    let plain = db.odm().find(Member::email().eq("ann@x.org")).await?;
    assert!(plain.is_empty(), "the default comparison is binary");

    let found = db
        .odm()
        .find(Member::email().eq("ann@x.org"))
        .collation(case_insensitive())
        .await?;
    assert_eq!(found, [member(1, "Ann@X.org", "Ann")]);
    let find = last_command(&db, "find");
    assert_eq!(
        find.get_document("collation")
            .unwrap()
            .get_str("locale")
            .unwrap(),
        "en"
    );
    assert_eq!(strength(&find), 2);

    // find_one and count take the same options.
    let one = db
        .odm()
        .find_one(Member::email().eq("ANN@X.ORG"))
        .collation(case_insensitive())
        .comment("one")
        .await?;
    assert_eq!(one, Some(member(1, "Ann@X.org", "Ann")));
    let find = last_command(&db, "find");
    assert_eq!(find.get_str("comment").unwrap(), "one");
    assert!(find.get_document("collation").is_ok());

    let n = db
        .odm()
        .count(Member::email().eq("BOB@X.ORG"))
        .collation(case_insensitive())
        .comment("how many")
        .await?;
    assert_eq!(n, 1);
    let aggregate = last_command(&db, "aggregate");
    assert_eq!(aggregate.get_str("comment").unwrap(), "how many");
    assert_eq!(strength(&aggregate), 2);
    let raw = db
        .raw()
        .collection::<odm::bson::Document>("members")
        .count_documents(doc! { "email": "BOB@X.ORG" })
        .await
        .unwrap();
    assert_eq!(raw, 0, "stored as written: the collation is the query's");
    Ok(())
}

#[tokio::test]
async fn a_hint_naming_no_index_is_the_servers_error() -> odm::Result<()> {
    let db = members().await?;
    let err = db
        .odm()
        .find(Member::name().eq("Bob"))
        .hint(Hint::Name("no_such_index".to_owned()))
        .await
        .expect_err("no index has that name");
    assert!(err.driver_error().is_some(), "{err}");
    assert!(!err.is_time_limit());
    let err = db
        .odm()
        .count(Member::name().eq("Bob"))
        .hint(Hint::Keys(doc! { "nope": 1 }))
        .await
        .expect_err("no index has those keys");
    assert!(err.driver_error().is_some(), "{err}");
    Ok(())
}

#[tokio::test]
async fn without_options_the_commands_are_unchanged() -> odm::Result<()> {
    let db = members().await?;
    db.odm().find(Member::name().eq("Bob")).await?;
    let find = last_command(&db, "find");
    for option in [
        "comment",
        "hint",
        "maxTimeMS",
        "collation",
        "readConcern",
        "allowDiskUse",
    ] {
        assert!(!find.contains_key(option), "{option} in {find}");
    }
    db.odm().count(Member::name().eq("Bob")).await?;
    let aggregate = last_command(&db, "aggregate");
    assert!(!aggregate.contains_key("collation") && !aggregate.contains_key("comment"));
    Ok(())
}

#[tokio::test]
async fn an_aggregate_takes_the_same_options() -> odm::Result<()> {
    let db = members().await?;
    let found: Vec<Member> = db
        .odm()
        .aggregate::<Member>()
        .filter(Member::email().eq("ann@x.org"))
        .collation(case_insensitive())
        .comment("pipeline report")
        .max_time(Duration::from_secs(3))
        .allow_disk_use(true)
        .let_vars(doc! { "limit": 10 })
        .await?;
    assert_eq!(found, [member(1, "Ann@X.org", "Ann")]);
    let aggregate = last_command(&db, "aggregate");
    assert_eq!(aggregate.get_str("comment").unwrap(), "pipeline report");
    assert!(aggregate.get_bool("allowDiskUse").unwrap());
    assert_eq!(
        aggregate.get_document("let").unwrap(),
        &doc! { "limit": 10 }
    );
    assert_eq!(strength(&aggregate), 2);
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "archived_members", soft_delete)]
struct Archived {
    #[serde(rename = "_id")]
    id: i32,
    deleted_at: Option<odm::bson::DateTime>,
}

#[tokio::test]
async fn an_estimated_count_reads_the_collections_metadata() -> odm::Result<()> {
    let db = members().await?;
    let n = db
        .odm()
        .estimated_count::<Member>()
        .comment("how many, roughly")
        .max_time(Duration::from_secs(1))
        .await?;
    assert_eq!(n, 3);
    let count = last_command(&db, "count");
    assert_eq!(count.get_str("count").unwrap(), "members");
    assert!(!count.contains_key("query"), "no filter: {count}");
    assert_eq!(count.get_str("comment").unwrap(), "how many, roughly");

    // A collection that holds more than the model's live documents is refused, unsent.
    db.odm()
        .insert_one(&Archived {
            id: 1,
            deleted_at: None,
        })
        .await?;
    db.odm().delete_one(Archived::id().eq(1)).await?;
    db.commands().take();
    let err = db
        .odm()
        .estimated_count::<Archived>()
        .await
        .expect_err("the marked document would be counted");
    assert!(err.to_string().contains("soft-deleted"), "{err}");
    assert!(db.commands().take().is_empty(), "nothing is sent");
    assert_eq!(db.odm().count(Filter::<Archived>::all()).await?, 0);
    Ok(())
}

#[tokio::test]
async fn distinct_sends_the_options_it_was_given() -> odm::Result<()> {
    let db = members().await?;
    db.odm().insert_one(&member(4, "ann@x.org", "ann")).await?;
    db.commands().take();
    let names: Vec<String> = db
        .odm()
        .distinct(&Member::name())
        .filter(Member::id_field().lte(4))
        .collation(case_insensitive())
        .comment("names")
        .max_time(Duration::from_secs(5))
        .read_concern(ReadConcern::majority())
        .await?;
    // Ann and ann are one name without case.
    assert_eq!(names.len(), 3, "{names:?}");
    let distinct = last_command(&db, "distinct");
    assert_eq!(strength(&distinct), 2);
    assert_eq!(distinct.get_str("comment").unwrap(), "names");
    assert!(distinct.get("maxTimeMS").is_some(), "{distinct}");
    assert_eq!(
        distinct
            .get_document("readConcern")
            .unwrap()
            .get_str("level")
            .unwrap(),
        "majority"
    );
    Ok(())
}
