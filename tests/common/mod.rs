//! Helpers shared by the integration tests: reading back what landed in the database with the
//! raw driver, and the commands sent. The models live beside this file (`library.rs`,
//! `catalog.rs`, `denorm.rs`); each test includes the ones it uses, because every model linked
//! into a test binary takes part in delete rules and cascades.

#![allow(dead_code)]

use futures_util::TryStreamExt;
use odm::bson::{doc, Document};
use odm::testing::TestDb;

/// The stored documents of `collection`, sorted by `_id`, read with the raw driver.
pub async fn stored(db: &TestDb, collection: &str) -> Vec<Document> {
    db.raw()
        .collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! {"_id": 1})
        .await
        .expect("raw find")
        .try_collect()
        .await
        .expect("raw cursor")
}

/// The stored document with this `_id`, read with the raw driver.
pub async fn stored_one(
    db: &TestDb,
    collection: &str,
    id: impl Into<odm::bson::Bson>,
) -> Option<Document> {
    db.raw()
        .collection::<Document>(collection)
        .find_one(doc! {"_id": id.into()})
        .await
        .expect("raw find_one")
}

/// The indexes of `collection` as `listIndexes` reports them, by name.
pub async fn listed_indexes(db: &TestDb, collection: &str) -> Vec<Document> {
    let reply = db
        .raw()
        .run_command(doc! {"listIndexes": collection})
        .await
        .expect("listIndexes");
    let mut out: Vec<Document> = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("cursor.firstBatch")
        .iter()
        .filter_map(|b| b.as_document().cloned())
        .collect();
    out.sort_by(|a, b| {
        a.get_str("name")
            .unwrap_or("")
            .cmp(b.get_str("name").unwrap_or(""))
    });
    out
}

/// The commands sent since the last call, as `name` strings, and the log emptied.
pub fn sent(db: &TestDb) -> Vec<String> {
    db.commands().take().into_iter().map(|c| c.name).collect()
}

/// The last command named `name` that was sent (its full document).
pub fn last_command(db: &TestDb, name: &str) -> Document {
    db.commands()
        .take()
        .into_iter()
        .rev()
        .find(|c| c.name == name)
        .and_then(|c| c.command)
        .unwrap_or_else(|| panic!("no `{name}` command was sent"))
}
