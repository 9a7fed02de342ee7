//! Declared indexes and `sync_indexes`, checked with `listIndexes` on a real server.

mod common;
#[path = "common/library.rs"]
mod library;

use common::{listed_indexes, sent, stored};
use library::*;
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;

fn index<'a>(listed: &'a [Document], name: &str) -> &'a Document {
    listed
        .iter()
        .find(|d| d.get_str("name").ok() == Some(name))
        .unwrap_or_else(|| panic!("no index {name} in {listed:?}"))
}

fn names(listed: &[Document]) -> Vec<&str> {
    listed
        .iter()
        .filter_map(|d| d.get_str("name").ok())
        .collect()
}

#[tokio::test]
async fn sync_creates_every_declared_index() -> odm::Result<()> {
    let db = common::db().await?;
    let report = db
        .odm()
        .sync_indexes_of::<Book>()
        .and::<User>()
        .and::<Recommendation>()
        .await?;
    assert_eq!(
        report.created(),
        [
            "books.slug_1",
            "books.isbn_1",
            "books.subjects_1",
            "books.publisher.name_1",
            "recommendations.book_1_user_1",
            "users.username_1",
        ]
    );
    // One listIndexes per collection, and one createIndexes per collection that lacked some.
    assert_eq!(
        sent(&db),
        [
            "listIndexes",
            "createIndexes",
            "listIndexes",
            "createIndexes",
            "listIndexes",
            "createIndexes"
        ]
    );

    let books = listed_indexes(&db, "books").await;
    assert_eq!(
        names(&books),
        ["_id_", "isbn_1", "publisher.name_1", "slug_1", "subjects_1"]
    );
    assert_eq!(
        index(&books, "isbn_1").get_document("key").unwrap(),
        &doc! {"isbn": 1}
    );
    assert!(index(&books, "isbn_1").get_bool("unique").unwrap());
    assert!(
        index(&books, "slug_1").get_bool("unique").is_err(),
        "slug is not unique"
    );
    assert_eq!(
        index(&books, "publisher.name_1")
            .get_document("key")
            .unwrap(),
        &doc! {"publisher.name": 1}
    );
    let recs = listed_indexes(&db, "recommendations").await;
    let compound = index(&recs, "book_1_user_1");
    assert_eq!(
        compound.get_document("key").unwrap(),
        &doc! {"book": 1, "user": 1}
    );
    assert!(compound.get_bool("unique").unwrap());
    Ok(())
}

#[tokio::test]
async fn a_second_sync_sends_no_create_indexes() -> odm::Result<()> {
    let db = common::db().await?;
    let sync = || {
        db.odm()
            .sync_indexes_of::<Book>()
            .and::<User>()
            .and::<Member>()
    };
    sync().await?;
    db.commands().clear();
    let again = sync().await?;
    assert!(again.is_in_sync(), "{again}");
    let names = sent(&db);
    assert!(
        !names.is_empty() && names.iter().all(|n| n == "listIndexes"),
        "{names:?}"
    );
    assert!(again
        .collections
        .iter()
        .any(|c| c.collection == "books" && c.unchanged.len() == 4));
    Ok(())
}

#[tokio::test]
async fn differing_and_undeclared_indexes_are_reported_not_dropped() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .run_command(doc! {"createIndexes": "books", "indexes": [
            {"key": {"isbn": 1}, "name": "isbn_1"},
            {"key": {"legacy": 1}, "name": "legacy_1"},
        ]})
        .await?;

    let report = db.odm().sync_indexes_of::<Book>().await?;
    let books = &report.collections[0];
    assert_eq!(books.extra, ["legacy_1"]);
    assert_eq!(books.differing.len(), 1);
    assert_eq!(books.differing[0].name, "isbn_1");
    assert_eq!(
        books.differing[0].differences,
        ["unique: declared true, found false"]
    );
    assert!(!report.is_in_sync());
    let printed = report.to_string();
    assert!(
        printed.contains("DIFFERS    isbn_1 (unique: declared true, found false)"),
        "{printed}"
    );
    assert!(printed.contains("EXTRA      legacy_1"), "{printed}");

    let listed = listed_indexes(&db, "books").await;
    assert!(
        names(&listed).contains(&"legacy_1"),
        "an undeclared index is kept"
    );
    assert!(
        index(&listed, "isbn_1").get_bool("unique").is_err(),
        "a differing index is left as it is"
    );

    let fixed = db
        .odm()
        .sync_indexes_of::<Book>()
        .drop_extra(true)
        .replace_differing(true)
        .await?;
    assert_eq!(fixed.collections[0].dropped, ["legacy_1"]);
    assert!(fixed.collections[0].differing[0].replaced);
    let listed = listed_indexes(&db, "books").await;
    assert!(!names(&listed).contains(&"legacy_1"));
    assert!(index(&listed, "isbn_1").get_bool("unique").unwrap());
    assert!(db.odm().sync_indexes_of::<Book>().await?.is_in_sync());
    Ok(())
}

#[tokio::test]
async fn a_duplicate_key_error_names_the_index_and_the_value() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Book>().await?;
    db.odm().insert_one(&gatsby()).await?;
    let mut copy = gatsby();
    copy.id = 2;
    let err = db.odm().insert_one(&copy).await.unwrap_err();
    match &err {
        odm::Error::DuplicateKey {
            collection,
            index,
            key,
            ..
        } => {
            assert_eq!(collection, "books");
            assert_eq!(index, "isbn_1");
            assert!(key.contains("9781857150193"), "{key}");
        }
        other => panic!("expected a duplicate key error, got {other}"),
    }
    assert!(err.to_string().contains("isbn_1"), "{err}");
    assert_eq!(stored(&db, "books").await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_compound_unique_index_allows_each_pair_once() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Recommendation>().await?;
    let rec = |book, user| Recommendation {
        id: ObjectId::new(),
        book,
        user,
    };
    db.odm()
        .insert_many(&[rec(1, 1), rec(1, 2), rec(2, 1)])
        .await?;
    let err = db.odm().insert_one(&rec(1, 2)).await.unwrap_err();
    assert!(
        matches!(&err, odm::Error::DuplicateKey { index, .. } if index == "book_1_user_1"),
        "{err}"
    );
    assert_eq!(stored(&db, "recommendations").await.len(), 3);
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "members")]
struct Member {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique)]
    email: Option<String>,
    #[index(sparse, desc)]
    nickname: Option<String>,
    #[index(expire_after_secs = 3600, name = "session_ttl")]
    last_seen: DateTime,
}

fn member(id: i32, email: Option<&str>) -> Member {
    Member {
        id,
        email: email.map(String::from),
        nickname: None,
        last_seen: DateTime::now(),
    }
}

#[tokio::test]
async fn a_unique_option_field_lets_absent_values_coexist() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Member>().await?;
    let listed = listed_indexes(&db, "members").await;
    assert!(index(&listed, "email_1")
        .get_document("partialFilterExpression")
        .is_ok());
    assert!(index(&listed, "nickname_-1").get_bool("sparse").unwrap());
    assert_eq!(
        index(&listed, "nickname_-1").get_document("key").unwrap(),
        &doc! {"nickname": -1}
    );
    assert_eq!(
        index(&listed, "session_ttl")
            .get("expireAfterSeconds")
            .and_then(|v| v.as_i64().or(v.as_i32().map(i64::from))),
        Some(3600)
    );

    db.odm()
        .insert_many(&[
            member(1, None),
            member(2, None),
            member(3, Some("kate@example.com")),
        ])
        .await?;
    let err = db
        .odm()
        .insert_one(&member(4, Some("kate@example.com")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::DuplicateKey { index, .. } if index == "email_1"),
        "{err}"
    );
    assert_eq!(stored(&db, "members").await.len(), 3);
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "volumes", index(keys = "title, summary", text))]
struct Volume {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    summary: String,
    #[index]
    topics: Vec<String>,
}

/// Seed 002's keyword search: a multikey index on `topics`, and a text index. Where the
/// server has no text search (the local dev server), the refusal must be reported, with the
/// other indexes still created.
#[tokio::test]
async fn text_and_multikey_indexes_serve_their_queries() -> odm::Result<()> {
    let db = common::db().await?;
    let text_supported = match db.odm().sync_indexes_of::<Volume>().await {
        Ok(_) => true,
        Err(odm::Error::IndexSync(report)) => {
            let failures = report.failures();
            assert_eq!(failures.len(), 1, "{failures:?}");
            assert!(
                failures[0].starts_with("volumes.title_text_summary_text: "),
                "{failures:?}"
            );
            assert_eq!(report.collections[0].created, ["topics_1"]);
            assert!(
                report
                    .to_string()
                    .contains("FAILED     title_text_summary_text"),
                "{report}"
            );
            eprintln!(
                "note: this server has no text indexes; checked that the refusal is reported"
            );
            false
        }
        Err(other) => return Err(other),
    };
    let listed = listed_indexes(&db, "volumes").await;
    if text_supported {
        assert_eq!(
            names(&listed),
            ["_id_", "title_text_summary_text", "topics_1"]
        );
    } else {
        assert_eq!(names(&listed), ["_id_", "topics_1"]);
    }

    let moby = Volume {
        id: 1,
        title: "Moby-Dick".into(),
        summary: "A whaling voyage and a captain's revenge".into(),
        topics: vec!["whaling".into(), "allegory".into(), "voyage".into()],
    };
    let walden = Volume {
        id: 2,
        title: "Walden".into(),
        summary: "Simple living in natural surroundings".into(),
        topics: vec!["nature".into()],
    };
    db.odm().insert_many(&[moby, walden]).await?;
    let voyage = db.odm().find(Volume::topics().contains("voyage")).await?;
    assert_eq!(voyage.iter().map(|v| v.id).collect::<Vec<_>>(), [1]);
    if text_supported {
        let searched = db.odm().find::<Volume>(Filter::text("living")).await?;
        assert_eq!(searched.iter().map(|v| v.id).collect::<Vec<_>>(), [2]);
        assert!(
            db.odm().sync_indexes_of::<Volume>().await?.is_in_sync(),
            "text index compares as declared"
        );
    }
    Ok(())
}

#[test]
fn a_text_index_is_declared_with_every_text_field() {
    let specs = Volume::indexes();
    let text = specs
        .iter()
        .find(|s| s.name() == "title_text_summary_text")
        .expect("declared");
    assert_eq!(
        text.to_document().get_document("key").unwrap(),
        &doc! {"title": "text", "summary": "text"}
    );
}
