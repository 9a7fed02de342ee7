//! The testing harness itself: one server per process, a fresh database per test, dropped
//! afterwards, and a command log per test.

mod common;
#[path = "common/library.rs"]
mod library;

use library::*;
use odm::bson::Document;
use odm::testing::{test_uri, TestDb};

async fn database_names() -> Vec<String> {
    let client = odm::mongodb::Client::with_uri_str(test_uri().expect("uri"))
        .await
        .expect("client");
    client.list_database_names().await.expect("listDatabases")
}

#[tokio::test]
async fn a_test_database_is_fresh_and_is_dropped_afterwards() -> odm::Result<()> {
    let db = common::db().await?;
    let name = db.name().to_owned();
    assert!(name.starts_with("odm_test_"), "{name}");
    assert!(
        db.raw().list_collection_names().await?.is_empty(),
        "a new database is empty"
    );
    db.odm().insert_one(&gatsby()).await?;
    assert!(database_names().await.contains(&name));
    drop(db);
    assert!(
        !database_names().await.contains(&name),
        "dropped with the TestDb"
    );
    Ok(())
}

#[tokio::test]
async fn parallel_tests_get_distinct_databases_on_one_server() -> odm::Result<()> {
    let dbs = futures_util::future::try_join_all((0..8).map(|_| common::db())).await?;
    let mut names: Vec<&str> = dbs.iter().map(TestDb::name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 8);
    // Writes in one are invisible in another.
    dbs[0].odm().insert_one(&gatsby()).await?;
    assert_eq!(
        dbs[1]
            .raw()
            .collection::<Document>("books")
            .estimated_document_count()
            .await?,
        0
    );
    if std::env::var_os("MONGODB_URI").is_none() {
        let server = odm::testing::local_server()?;
        assert!(
            server.uri().starts_with("mongodb://127.0.0.1:"),
            "{}",
            server.uri()
        );
        assert_eq!(test_uri()?, server.uri(), "one server per process");
    }
    Ok(())
}

#[tokio::test]
async fn each_test_counts_only_its_own_commands() -> odm::Result<()> {
    let a = common::db().await?;
    let b = common::db().await?;
    a.odm().insert_one(&gatsby()).await?;
    a.odm().get::<Book>(1).await?;
    b.odm().count::<Book>(odm::Filter::all()).await?;
    assert_eq!(a.commands().names(), ["insert", "find"]);
    assert_eq!(b.commands().names(), ["aggregate"]);
    assert!(a.commands().take().iter().all(|c| c.db == a.name()));
    assert_eq!(a.commands().count(), 0, "take empties the log");
    Ok(())
}
