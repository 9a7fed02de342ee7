//! Sharding the collections of sharded models, the last step of `sync_indexes`.

use bson::{doc, Document};

pub use crate::error::ShardSync;

use crate::catalog::ShardKey;
use crate::{Error, Odm, Result};

/// The `shardCollection` command for `collection` of database `db`:
/// `{shardCollection: "db.collection", key: {...}}`.
pub fn shard_collection_command(db: &str, collection: &str, key: &ShardKey) -> Document {
    doc! {
        "shardCollection": format!("{db}.{collection}"),
        "key": key.key_document(),
    }
}

/// MongoDB's code for "already enabled" from `enableSharding` before 4.x-style no-ops.
const ALREADY_INITIALIZED: i32 = 23;

/// A sharded model's collection and its key.
struct Target {
    collection: &'static str,
    key: ShardKey,
}

/// Shards the sharded models' collections among `collections` (whose indexes, the keys'
/// included, have just been created). One `hello`; then, on a `mongos` only, one
/// `enableSharding` and one `shardCollection` per collection.
pub(crate) async fn shard_collections(odm: &Odm, collections: &[String]) -> Result<Vec<ShardSync>> {
    let targets: Vec<Target> = odm
        .catalog()
        .sharded()
        .filter(|(m, _)| collections.iter().any(|c| c == m.collection))
        .map(|(m, key)| Target {
            collection: m.collection,
            key,
        })
        .collect();
    if targets.is_empty() {
        return Ok(Vec::new());
    }
    let hello = odm
        .own_database()
        .run_command(doc! { "hello": 1 })
        .await
        .map_err(|e| Error::from_driver(targets[0].collection, e))?;
    let mongos = hello.get_str("msg").is_ok_and(|m| m == "isdbgrid");
    if !mongos {
        let reason = if hello.get_str("setName").is_ok() {
            "the server is a replica set member, not a mongos (hello has no `msg: \"isdbgrid\"`)"
        } else {
            "the server is a standalone mongod, not a mongos (hello has no `msg: \"isdbgrid\"`)"
        };
        return Ok(targets
            .into_iter()
            .map(|e| ShardSync::NotSharded {
                collection: e.collection.to_owned(),
                key: e.key.key_document(),
                reason: reason.to_owned(),
            })
            .collect());
    }
    let db = odm.own_database().name().to_owned();
    let admin = odm.client().database("admin");
    match admin.run_command(doc! { "enableSharding": &db }).await {
        Ok(_) => {}
        Err(e) if matches!(&*e.kind, mongodb::error::ErrorKind::Command(c) if c.code == ALREADY_INITIALIZED) =>
            {}
        Err(e) => return Err(Error::from_driver(targets[0].collection, e)),
    }
    let mut out = Vec::new();
    for e in targets {
        admin
            .run_command(shard_collection_command(&db, e.collection, &e.key))
            .await
            .map_err(|err| Error::from_driver(e.collection, err))?;
        out.push(ShardSync::Sharded {
            collection: e.collection.to_owned(),
            key: e.key.key_document(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ShardOrder;

    #[test]
    fn the_command_names_the_namespace_and_the_key_in_order() {
        let key = ShardKey {
            fields: &[("host", ShardOrder::Ranged), ("time", ShardOrder::Ranged)],
            segment: None,
            mutable: false,
        };
        assert_eq!(
            shard_collection_command("logs", "logmsgs", &key),
            doc! { "shardCollection": "logs.logmsgs", "key": { "host": 1, "time": 1 } }
        );
        let hashed = ShardKey {
            fields: &[("user", ShardOrder::Hashed)],
            segment: None,
            mutable: false,
        };
        assert_eq!(
            shard_collection_command("app", "images", &hashed),
            doc! { "shardCollection": "app.images", "key": { "user": "hashed" } }
        );
    }
}
