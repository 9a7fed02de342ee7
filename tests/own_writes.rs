//! The writes odm sends for itself go through one path, which offers each to the maintainers of
//! the model it writes: a delete rule's pull of DBRefs (a pipeline) moves the holder's version
//! in the same command, and a write that keeps derived data (a two-way parent's array) leaves
//! the version alone. Each is read back with the raw driver.

mod common;

use common::stored_one;
use odm::bson::{Bson, DateTime};
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_players")]
struct Player {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_teams")]
struct Team {
    #[serde(rename = "_id")]
    id: i32,
}

/// What a board follows: players or teams, stored as DBRefs.
#[derive(PolyRef, Debug, Clone, PartialEq)]
enum Followed {
    Player(Ref<Player>),
    Team(Ref<Team>),
}

/// A board keeps a version and `updated_at`; a followed player's delete pulls it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_boards")]
struct Board {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(poly, many, max = 10, on_delete = "pull")]
    follows: Vec<Followed>,
    #[odm(version)]
    version: u64,
    #[odm(updated_at)]
    updated_at: DateTime,
}

#[tokio::test]
async fn a_pull_of_dbrefs_moves_the_holder_s_version_in_the_same_command() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&[Player { id: 1 }, Player { id: 2 }])
        .await?;
    odm.insert_one(&Team { id: 1 }).await?;
    let board = Board {
        id: 1,
        follows: vec![
            Followed::Player(Ref::new(1)),
            Followed::Team(Ref::new(1)),
            Followed::Player(Ref::new(2)),
        ],
        version: 0,
        updated_at: DateTime::from_millis(0),
    };
    odm.insert_one(&board).await?;
    let loaded = odm.get::<Board>(1).await?.expect("stored");
    db.commands().clear();
    odm.delete_one(Player::id_field().eq(1)).await?;
    // One update of the boards: a pipeline of one `$set` stage that filters the array and
    // stamps the board.
    let update = common::first_statement(&db.commands().take(), "update", "own_boards")
        .get_array("u")
        .expect("a pipeline")
        .clone();
    assert_eq!(update.len(), 1, "{update:?}");
    let set = update[0]
        .as_document()
        .and_then(|s| s.get_document("$set").ok())
        .expect("a $set stage");
    assert!(
        set.contains_key("follows")
            && set.contains_key("version")
            && set.contains_key("updated_at"),
        "{set}"
    );
    let stored = stored_one(&db, "own_boards", 1)
        .await
        .expect("the board stays");
    assert_eq!(stored.get_i64("version").ok(), Some(1), "{stored}");
    assert!(
        stored
            .get_datetime("updated_at")
            .is_ok_and(|at| at.timestamp_millis() > 0),
        "{stored}"
    );
    let refs: Vec<(String, Bson)> = stored
        .get_array("follows")
        .expect("an array")
        .iter()
        .filter_map(|f| f.as_document())
        .map(|f| {
            (
                f.get_str("$ref").unwrap_or("").to_owned(),
                f.get("$id").cloned().unwrap_or(Bson::Null),
            )
        })
        .collect();
    assert_eq!(
        refs,
        vec![
            ("own_teams".to_owned(), Bson::Int32(1)),
            ("own_players".to_owned(), Bson::Int32(2)),
        ]
    );
    // The board loaded before is stale: its replacement would bring the pulled player back.
    let e = odm.replace_one(&loaded).await.expect_err("stale");
    assert!(
        matches!(
            e,
            odm::Error::VersionConflict {
                expected: 0,
                found: 1,
                ..
            }
        ),
        "{e:?}"
    );
    Ok(())
}

/// A squad lists its recruits (two-way) and keeps a version; a recruit names its squad.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_squads")]
struct Squad {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 10, inverse = "squad", on_delete = "pull")]
    recruits: Vec<Ref<Recruit>>,
    #[odm(version)]
    version: u64,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_recruits")]
struct Recruit {
    #[serde(rename = "_id")]
    id: i32,
    #[parent(inverse = "recruits")]
    squad: Ref<Squad>,
}

/// The parent's array of a two-way reference is derived from its children's references: the
/// write that lists a new child is offered to the parent's maintainers as derived data, and
/// leaves the parent's version alone, so that a replacement of the parent loaded before is
/// no conflict.
#[tokio::test]
async fn a_two_way_parent_s_array_is_derived_and_leaves_its_version() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let squad = Squad {
        id: 1,
        recruits: Vec::new(),
        version: 0,
    };
    odm.insert_one(&squad).await?;
    odm.insert_one(&Recruit {
        id: 7,
        squad: Ref::new(1),
    })
    .await?;
    let stored = stored_one(&db, "own_squads", 1).await.expect("stored");
    assert_eq!(
        stored.get_array("recruits").ok(),
        Some(&vec![Bson::Int32(7)])
    );
    assert_eq!(stored.get_i64("version").ok(), Some(0), "{stored}");
    let loaded = odm.get::<Squad>(1).await?.expect("stored");
    assert_eq!(loaded.recruits.len(), 1);
    odm.replace_one(&loaded).await?;
    let stored = stored_one(&db, "own_squads", 1).await.expect("stored");
    assert_eq!(stored.get_i64("version").ok(), Some(1), "{stored}");
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_tags")]
struct Tag {
    #[serde(rename = "_id")]
    id: i32,
}

/// A crate keeps its tag (cleared when the tag is deleted) and a version.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_crates")]
struct Crate {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "nullify")]
    tag: Option<Ref<Tag>>,
    #[odm(version)]
    version: u64,
}

/// The server stops answering right after a delete rule's `update` reached it, before the
/// delete: the delete ends with an error saying its outcome is unknown, in about the driver's
/// timeout. In a transaction nothing it sent lands; without one, the rule's write lands and
/// the tag stays. Either way the same delete again finishes it: the tag gone, the crate's
/// reference cleared, and its version moved once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_paused_between_a_rule_s_write_and_the_delete_leaves_it_to_be_finished(
) -> odm::Result<()> {
    let db = common::db().await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let uri = format!("{}&{}", proxy.uri(), common::GIVE_UP_SOON);
    let odm = odm::Odm::connect(&uri, db.name())
        .await?
        .with_catalog(common::catalog());
    odm.insert_one(&Tag { id: 1 }).await?;
    odm.insert_one(&Crate {
        id: 1,
        tag: Some(Ref::new(1)),
        version: 0,
    })
    .await?;
    let in_transaction = odm.supports_transactions().await?;
    proxy.pause_after("update", 1);
    let started = std::time::Instant::now();
    let err = odm
        .delete_one(Tag::id_field().eq(1))
        .await
        .expect_err("the server stopped answering");
    assert!(err.is_outcome_unknown(), "{err:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{err}"
    );
    proxy.resume();
    // The held update reaches the server (and, in a transaction, is never committed).
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let held = stored_one(&db, "own_crates", 1).await.expect("stored");
    assert!(
        stored_one(&db, "own_tags", 1).await.is_some(),
        "the delete was never sent"
    );
    match in_transaction {
        true => assert_eq!(held.get("tag"), Some(&Bson::Int32(1)), "{held}"),
        false => assert_eq!(held.get("tag"), Some(&Bson::Null), "{held}"),
    }
    // The same delete again, through the same handle.
    assert_eq!(odm.delete_one(Tag::id_field().eq(1)).await?, 1);
    assert!(stored_one(&db, "own_tags", 1).await.is_none());
    let done = stored_one(&db, "own_crates", 1).await.expect("stored");
    assert_eq!(done.get("tag"), Some(&Bson::Null), "{done}");
    assert_eq!(done.get_i64("version").ok(), Some(1), "{done}");
    Ok(())
}

/// A branch of a tree that keeps a version: its parent is its writers' to set (a replacement
/// writes it), so a move of the branch is an owned write.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "own_branches", tree)]
struct Branch {
    #[serde(rename = "_id")]
    id: i32,
    parent: Option<i32>,
    ancestors: Vec<i32>,
    #[odm(version)]
    version: u64,
}

/// A move sets the node's parent in one `findAndModify`, offered to the node's maintainers as
/// an owned write: the same command moves the node's version, so that a replacement of the
/// node loaded before the move is a conflict, not a silent move back.
#[tokio::test]
async fn a_tree_move_moves_the_node_s_version_in_its_one_find_and_modify() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let branch = |id, parent| Branch {
        id,
        parent,
        ancestors: Vec::new(),
        version: 0,
    };
    odm.insert_many(&[branch(1, None), branch(2, None)]).await?;
    odm.insert_one(&branch(3, Some(1))).await?;
    let loaded = odm.get::<Branch>(3).await?.expect("stored");
    db.commands().clear();
    odm.tree::<Branch>()
        .move_under(3, 2)
        .transaction(odm::TransactionMode::Never)
        .await?;
    let log = db.commands().take();
    let writes: Vec<&odm::bson::Document> = log
        .iter()
        .filter(|c| c.name == "findAndModify")
        .filter_map(|c| c.command.as_ref())
        .filter(|c| {
            c.get_str("findAndModify")
                .is_ok_and(|n| n == "own_branches")
        })
        .collect();
    assert_eq!(writes.len(), 1, "{log:?}");
    let update = writes[0]
        .get_document("update")
        .expect("an update document");
    assert!(update.to_string().contains("version"), "{update}");
    let stored = stored_one(&db, "own_branches", 3).await.expect("stored");
    assert_eq!(stored.get_i32("parent").ok(), Some(2), "{stored}");
    assert_eq!(
        stored.get_array("ancestors").ok(),
        Some(&vec![Bson::Int32(2)])
    );
    assert_eq!(stored.get_i64("version").ok(), Some(1), "{stored}");
    let e = odm.replace_one(&loaded).await.expect_err("stale");
    assert!(
        matches!(
            e,
            odm::Error::VersionConflict {
                expected: 0,
                found: 1,
                ..
            }
        ),
        "{e:?}"
    );
    let stored = stored_one(&db, "own_branches", 3).await.expect("stored");
    assert_eq!(
        stored.get_i32("parent").ok(),
        Some(2),
        "the move stays: {stored}"
    );
    Ok(())
}
