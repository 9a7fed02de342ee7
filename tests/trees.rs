//! Trees of documents (`#[odm(tree)]`): the seed's subjects, each naming its parent and listing
//! its ancestors root first, kept by the ODM through inserts, moves and deletes, read back with
//! the raw driver, commands counted.

mod common;

use std::collections::HashMap;

use common::{listed_indexes, sent, stored, stored_one};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::tree::TreeIssue;
use odm::{Error, TransactionMode};

/// The seed's subjects, with a slug `_id` and the name a field of its own, so that a rename
/// is an update of one field (cascaded to the books that copy it), not a new id for the node
/// and every one of its descendants.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "subjects", tree(on_delete = "lift"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

/// A book files under a subject and keeps a copy of its name.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference(on_delete = "restrict")]
    subject: Ref<Subject>,
    #[denormalize(from = "Subject", via = "subject", fields = "name")]
    subject_name: String,
}

/// A tree linked by plain ids, which deletes whole subtrees.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "nodes", tree(on_delete = "cascade"))]
struct Node {
    #[serde(rename = "_id")]
    id: i32,
    parent: Option<i32>,
    ancestors: Vec<i32>,
}

/// A tree with the default rule (refuse to delete a node with children), under other field
/// names, with ids of any shape.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "folders", tree(parent = "up", ancestors = "path"))]
struct Folder {
    #[serde(rename = "_id")]
    id: Bson,
    #[serde(rename = "parentId")]
    up: Option<Ref<Folder>>,
    path: Vec<Ref<Folder>>,
}

fn subject(id: &str, name: &str, parent: Option<&str>) -> Subject {
    Subject {
        id: id.to_owned(),
        name: name.to_owned(),
        parent: parent.map(|p| Ref::new(p.to_owned())),
        // Whatever the caller says, the ODM takes the ancestors from the parent.
        ancestors: vec![Ref::new("made-up".to_owned())],
    }
}

/// The seed's four subjects.
fn seed() -> Vec<Subject> {
    vec![
        subject("american-literature", "American Literature", None),
        subject("1920s", "1920s", Some("american-literature")),
        subject("jazz-age", "Jazz Age", Some("1920s")),
        subject(
            "jazz-age-new-york",
            "Jazz Age in New York",
            Some("jazz-age"),
        ),
    ]
}

fn ids(v: &[Subject]) -> Vec<&str> {
    v.iter().map(|s| s.id.as_str()).collect()
}

fn strings(values: &[&str]) -> Vec<Bson> {
    values.iter().map(|s| Bson::from(*s)).collect()
}

/// Every stored node's ancestors against its parent chain, with the raw driver: the nodes
/// whose ancestors differ, and the nodes on or under a parent cycle or a missing parent.
async fn inconsistent(db: &TestDb, collection: &str, parent: &str, ancestors: &str) -> Vec<String> {
    let docs = stored(db, collection).await;
    let by_id: HashMap<String, &Document> = docs
        .iter()
        .map(|d| (d.get("_id").unwrap().to_string(), d))
        .collect();
    let mut wrong = Vec::new();
    for d in &docs {
        let mut chain = Vec::new();
        let mut at = d.get(parent).cloned().unwrap_or(Bson::Null);
        while at != Bson::Null {
            if chain.len() > by_id.len() {
                wrong.push(format!("cycle above {}", d.get("_id").unwrap()));
                break;
            }
            chain.push(at.clone());
            at = match by_id.get(&at.to_string()) {
                Some(p) => p.get(parent).cloned().unwrap_or(Bson::Null),
                None => {
                    wrong.push(format!(
                        "missing parent {at} above {}",
                        d.get("_id").unwrap()
                    ));
                    Bson::Null
                }
            };
        }
        chain.reverse();
        if d.get_array(ancestors).ok() != Some(&chain) {
            wrong.push(format!(
                "{}: stored {:?}, chain {chain:?}",
                d.get("_id").unwrap(),
                d.get(ancestors)
            ));
        }
    }
    wrong
}

#[tokio::test]
async fn insert_fills_the_ancestors_from_the_parent_with_one_projected_read() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&seed()[0]).await?;
    assert_eq!(sent(&db), ["insert"], "a root reads nothing");
    for s in &seed()[1..] {
        odm.insert_one(s).await?;
    }
    let names = sent(&db);
    assert_eq!(
        names,
        [
            "hello",
            "findAndModify",
            "insert",
            "update",
            "commitTransaction",
            "findAndModify",
            "insert",
            "update",
            "commitTransaction",
            "findAndModify",
            "insert",
            "update",
            "commitTransaction",
        ],
        "per node: the parent read (and marked), the insert, the mark removed"
    );
    let jazz = stored_one(&db, "subjects", "jazz-age").await.unwrap();
    assert_eq!(
        jazz,
        doc! {
            "_id": "jazz-age",
            "name": "Jazz Age",
            "parent": "1920s",
            "ancestors": ["american-literature", "1920s"],
        },
        "the seed's shape, the caller's ancestors replaced, no mark left"
    );
    assert_eq!(
        stored_one(&db, "subjects", "american-literature")
            .await
            .unwrap(),
        doc! { "_id": "american-literature", "name": "American Literature", "parent": Bson::Null, "ancestors": [] },
    );
    Ok(())
}

#[tokio::test]
async fn without_transactions_an_insert_reads_its_parents_with_one_find() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm().clone().without_transactions();
    assert!(!odm.supports_transactions().await?);
    let seed = seed();
    odm.insert_one(&seed[0]).await?;
    odm.insert_one(&seed[1]).await?;
    odm.insert_many(&seed[2..]).await?;
    assert_eq!(
        sent(&db),
        ["insert", "find", "insert", "find", "insert"],
        "no hello and no transaction: a root reads nothing; otherwise one find of the parents \
         outside the call, then the insert"
    );
    odm.insert_many([
        &subject("harlem", "Harlem Renaissance", Some("1920s")),
        &subject("lost", "Lost Generation", Some("1920s")),
        &subject("gatsby", "Gatsby", Some("jazz-age-new-york")),
    ])
    .await?;
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["find", "insert"],
        "two parents outside the batch: still one find"
    );
    let find = commands[0].command.as_ref().expect("documents kept");
    assert_eq!(
        find.get_document("projection").unwrap(),
        &doc! { "parent": 1, "ancestors": 1 },
        "the parents read projected to their links"
    );
    assert_eq!(
        stored_one(&db, "subjects", "gatsby").await.unwrap(),
        doc! {
            "_id": "gatsby",
            "name": "Gatsby",
            "parent": "jazz-age-new-york",
            "ancestors": ["american-literature", "1920s", "jazz-age", "jazz-age-new-york"],
        },
        "no mark written: nothing to remove"
    );
    assert_eq!(
        inconsistent(&db, "subjects", "parent", "ancestors").await,
        Vec::<String>::new()
    );
    Ok(())
}

#[tokio::test]
async fn a_whole_tree_in_one_call_is_one_insert_in_any_order() -> odm::Result<()> {
    let db = common::db().await?;
    let mut all = seed();
    all.reverse();
    db.odm().insert_many(&all).await?;
    assert_eq!(
        sent(&db),
        ["insert"],
        "every parent is in the batch: nothing to read"
    );
    let ny = stored_one(&db, "subjects", "jazz-age-new-york")
        .await
        .unwrap();
    assert_eq!(
        ny.get_array("ancestors").unwrap(),
        &strings(&["american-literature", "1920s", "jazz-age"])
    );
    assert!(inconsistent(&db, "subjects", "parent", "ancestors")
        .await
        .is_empty());

    let db = common::db().await?;
    db.odm().insert_many(&seed()).await?;
    assert_eq!(sent(&db), ["insert"], "parents first, likewise");
    assert!(inconsistent(&db, "subjects", "parent", "ancestors")
        .await
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn a_missing_parent_inserts_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    let err = db
        .odm()
        .insert_one(&subject("orphan", "Orphan", Some("nowhere")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotFound { collection, what } if collection == "subjects" && what.contains("nowhere")),
        "{err}"
    );
    assert!(stored(&db, "subjects").await.is_empty());
    let looped = [subject("a", "A", Some("b")), subject("b", "B", Some("a"))];
    let err = db.odm().insert_many(&looped).await.unwrap_err();
    assert!(matches!(err, Error::TreeCycle { .. }), "{err}");
    assert!(stored(&db, "subjects").await.is_empty());
    Ok(())
}

#[tokio::test]
async fn the_tree_queries_are_one_command_each() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    let names: Vec<String> = listed_indexes(&db, "subjects")
        .await
        .iter()
        .map(|i| i.get_str("name").unwrap().to_owned())
        .collect();
    assert!(names.contains(&"parent_1".to_owned()), "{names:?}");
    assert!(names.contains(&"ancestors_1".to_owned()), "{names:?}");
    odm.insert_many(&seed()).await?;
    sent(&db);
    let tree = odm.tree::<Subject>();

    // The seed's `db.subjects.find({ ancestors: "1920s" })`.
    let below = tree
        .descendants("1920s")
        .sort(Subject::id_field().asc())
        .await?;
    assert_eq!(ids(&below), ["jazz-age", "jazz-age-new-york"]);
    let children = tree.children("1920s").await?;
    assert_eq!(ids(&children), ["jazz-age"]);
    let roots = tree.roots().await?;
    assert_eq!(ids(&roots), ["american-literature"]);
    let chain = tree.ancestors("jazz-age-new-york").await?;
    assert_eq!(
        ids(&chain),
        ["american-literature", "1920s", "jazz-age"],
        "root first"
    );
    assert_eq!(tree.depth("jazz-age-new-york").await?, 3);
    assert_eq!(tree.depth("american-literature").await?, 0);
    assert_eq!(
        sent(&db),
        ["find", "find", "find", "aggregate", "find", "find"],
        "one command per query"
    );
    let filter = last_filter(&db, &tree.descendants("1920s")).await?;
    assert_eq!(filter, doc! { "ancestors": "1920s" });

    // The kept fields are queried, sorted and projected like any field.
    let direct = odm
        .find(Subject::parent().eq(Ref::new("1920s".to_owned())))
        .sort(Subject::ancestors().asc())
        .await?;
    assert_eq!(ids(&direct), ["jazz-age"]);

    let err = tree.depth("nowhere").await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    let err = tree.ancestors("nowhere").await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    Ok(())
}

async fn last_filter(db: &TestDb, _find: &odm::ops::Find<'_, Subject>) -> odm::Result<Document> {
    db.commands().clear();
    db.odm().tree::<Subject>().descendants("1920s").await?;
    let find = common::last_command(db, "find");
    Ok(find.get_document("filter").unwrap().clone())
}

/// `n` nodes of a tree of plain ids laid out as a heap with `branching` children per node,
/// ids from `first`, the first one under `root`.
fn heap(first: i32, n: i32, branching: i32, root: Option<i32>) -> Vec<Node> {
    (0..n)
        .map(|k| Node {
            id: first + k,
            parent: if k == 0 {
                root
            } else {
                Some(first + (k - 1) / branching)
            },
            ancestors: Vec::new(),
        })
        .collect()
}

#[tokio::test]
async fn moving_a_subtree_of_2000_nodes_in_a_tree_of_10000_takes_as_many_commands_as_a_leaf(
) -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    // Root 0; a subtree of 2,000 nodes under 1 (three children each), 7,999 nodes under 2001
    // (four each): depth 8.
    let mut all = heap(0, 1, 1, None);
    all.extend(heap(1, 2000, 3, Some(0)));
    all.extend(heap(2001, 7999, 4, Some(0)));
    odm.insert_many(&all).await?;
    let deepest = stored(&db, "nodes")
        .await
        .iter()
        .map(|d| d.get_array("ancestors").unwrap().len())
        .max();
    assert_eq!(deepest, Some(8));
    let tree = odm.tree::<Node>();
    // Warm the transaction check, then count.
    tree.move_under(9999, 2001).await?;
    sent(&db);

    let moved = tree.move_under(1, 2006).await?;
    assert_eq!(moved.descendants, 1999);
    assert_eq!(moved.previous, Some(0));
    assert!(moved.changed && moved.in_transaction);
    let big = sent(&db);
    tree.move_under(9998, 2001).await?;
    let leaf = sent(&db);
    assert_eq!(
        big,
        [
            "findAndModify",
            "findAndModify",
            "update",
            "update",
            "commitTransaction"
        ]
    );
    assert_eq!(big, leaf, "the commands do not grow with the subtree");

    let wrong = inconsistent(&db, "nodes", "parent", "ancestors").await;
    assert!(
        wrong.is_empty(),
        "{} wrong, e.g. {:?}",
        wrong.len(),
        wrong.first()
    );
    let one = stored_one(&db, "nodes", 1).await.unwrap();
    assert_eq!(
        one.get_array("ancestors").unwrap(),
        &vec![Bson::Int32(0), 2001.into(), 2002.into(), 2006.into()]
    );
    let below = tree.descendants(1).await?;
    assert_eq!(below.len(), 1999);
    assert!(below
        .iter()
        .all(|n| n.ancestors.starts_with(&[0, 2001, 2002, 2006, 1])));
    Ok(())
}

/// The 50 moves of the concurrency tests, on a heap of 400 nodes with three children each:
/// 41 nodes of the fifth level under nodes of the third and fourth, while 9 nodes of the second
/// level (ancestors of most of those targets) move under another node of the first.
fn fifty_moves() -> Vec<(i32, i32)> {
    let mut moves: Vec<(i32, i32)> = (4..=12).map(|x| (x, 1 + ((x - 1) / 3) % 3)).collect();
    moves.extend((0..41).map(|i| (121 + i * 5, 13 + (i * 37) % 108)));
    moves
}

#[tokio::test]
async fn fifty_concurrent_moves_of_different_subtrees_leave_a_consistent_tree() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    db.odm().insert_many(&heap(0, 400, 3, None)).await?;
    let moves = fifty_moves();
    let tasks: Vec<_> = moves
        .iter()
        .map(|&(node, to)| {
            let odm = db.odm().clone();
            tokio::spawn(async move { odm.tree::<Node>().move_under(node, to).await })
        })
        .collect();
    for task in tasks {
        let moved = task.await.expect("task")?;
        assert!(moved.in_transaction);
    }
    let wrong = inconsistent(&db, "nodes", "parent", "ancestors").await;
    assert!(
        wrong.is_empty(),
        "{} wrong, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(3)]
    );
    for (node, to) in moves {
        let d = stored_one(&db, "nodes", node).await.unwrap();
        assert_eq!(d.get_i32("parent").unwrap(), to, "{d}");
        assert!(!d.contains_key("__odm_tree_mark"), "{d}");
    }
    let report = db.odm().tree::<Node>().verify().await?;
    assert!(report.is_consistent(), "{report:?}");
    assert_eq!(report.checked, 400);
    Ok(())
}

#[tokio::test]
async fn without_transactions_concurrent_moves_are_repaired_by_the_sweep() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&heap(0, 400, 3, None)).await?;
    sent(&db);
    db.odm()
        .tree::<Node>()
        .move_under(399, 5)
        .transaction(TransactionMode::Never)
        .await?;
    assert_eq!(
        sent(&db),
        ["find", "findAndModify", "update"],
        "the fixed order"
    );
    let moves = fifty_moves();
    let tasks: Vec<_> = moves
        .iter()
        .map(|&(node, to)| {
            let odm = db.odm().clone();
            tokio::spawn(async move {
                odm.tree::<Node>()
                    .move_under(node, to)
                    .transaction(TransactionMode::Never)
                    .await
            })
        })
        .collect();
    for task in tasks {
        assert!(!task.await.expect("task")?.in_transaction);
    }
    // Moves that read a parent's ancestors just before another move changed them leave nodes
    // behind (how many depends on the interleaving): the sweep finds exactly those.
    let behind = inconsistent(&db, "nodes", "parent", "ancestors")
        .await
        .len();
    let report = db.odm().tree::<Node>().verify().repair(true).await?;
    assert_eq!(report.issues.len(), behind, "{report:?}");
    assert!(
        report
            .issues
            .iter()
            .all(|i| matches!(i, TreeIssue::WrongAncestors { .. })),
        "{report:?}"
    );
    assert_eq!(report.repaired as usize, report.issues.len());
    let wrong = inconsistent(&db, "nodes", "parent", "ancestors").await;
    assert!(wrong.is_empty(), "{wrong:?}");
    assert!(db.odm().tree::<Node>().verify().await?.is_consistent());
    Ok(())
}

#[tokio::test]
async fn moving_a_node_under_itself_or_its_descendant_changes_nothing() -> odm::Result<()> {
    for mode in [TransactionMode::Auto, TransactionMode::Never] {
        let db = common::db().await?;
        db.odm().insert_many(&seed()).await?;
        let before = stored(&db, "subjects").await;
        let tree = db.odm().tree::<Subject>();
        for (node, under) in [
            ("1920s", "1920s"),
            ("1920s", "jazz-age"),
            ("american-literature", "jazz-age-new-york"),
        ] {
            let err = tree
                .move_under(node, under)
                .transaction(mode)
                .await
                .unwrap_err();
            assert!(
                matches!(&err, Error::TreeCycle { collection, node: n, parent } if collection == "subjects" && n.contains(node) && parent.contains(under)),
                "{mode:?}: {err}"
            );
        }
        let err = tree
            .move_under("1920s", "nowhere")
            .transaction(mode)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
        let err = tree
            .move_under("nowhere", "1920s")
            .transaction(mode)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
        assert_eq!(stored(&db, "subjects").await, before, "{mode:?}");
    }
    Ok(())
}

#[tokio::test]
async fn a_move_to_the_root_and_back() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&seed()).await?;
    let tree = db.odm().tree::<Subject>();
    sent(&db);
    let moved = tree.move_to_root("jazz-age").await?;
    assert_eq!(moved.previous.as_deref(), Some("1920s"));
    assert_eq!(moved.descendants, 1);
    assert_eq!(
        sent(&db),
        ["hello", "findAndModify", "update", "commitTransaction"]
    );
    assert_eq!(
        stored_one(&db, "subjects", "jazz-age-new-york")
            .await
            .unwrap()
            .get_array("ancestors")
            .unwrap(),
        &strings(&["jazz-age"])
    );
    let roots = tree.roots().sort(Subject::id_field().asc()).await?;
    assert_eq!(ids(&roots), ["american-literature", "jazz-age"]);
    let moved = tree.move_under("jazz-age", "1920s").await?;
    assert_eq!(moved.previous, None);
    assert!(inconsistent(&db, "subjects", "parent", "ancestors")
        .await
        .is_empty());
    let again = tree.move_under("jazz-age", "1920s").await?;
    assert!(!again.changed);
    assert_eq!(again.descendants, 0);
    Ok(())
}

#[tokio::test]
async fn lift_gives_the_children_to_the_grandparent_in_a_fixed_number_of_commands(
) -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&seed()).await?;
    // More children and grandchildren, to show the commands do not depend on them.
    let more: Vec<Subject> = (0..20)
        .map(|i| {
            subject(
                &format!("x{i}"),
                "x",
                Some(if i < 10 { "1920s" } else { "jazz-age" }),
            )
        })
        .collect();
    db.odm().insert_many(&more).await?;
    sent(&db);
    assert_eq!(
        db.odm().delete_one(Subject::id_field().eq("1920s")).await?,
        1
    );
    let names = sent(&db);
    // The ids, the pull, the new parents, then the delete with the rules of the references
    // into subjects (the ids, the books' restrict count, the delete).
    assert_eq!(
        names,
        [
            "find",
            "update",
            "update",
            "find",
            "aggregate",
            "delete",
            "commitTransaction"
        ]
    );
    let jazz = stored_one(&db, "subjects", "jazz-age").await.unwrap();
    assert_eq!(jazz.get_str("parent").unwrap(), "american-literature");
    assert_eq!(
        jazz.get_array("ancestors").unwrap(),
        &strings(&["american-literature"])
    );
    let ny = stored_one(&db, "subjects", "jazz-age-new-york")
        .await
        .unwrap();
    assert_eq!(
        ny.get_array("ancestors").unwrap(),
        &strings(&["american-literature", "jazz-age"])
    );
    assert!(inconsistent(&db, "subjects", "parent", "ancestors")
        .await
        .is_empty());
    assert_eq!(
        db.odm()
            .tree::<Subject>()
            .children("american-literature")
            .await?
            .len(),
        11
    );

    // A root's children become roots.
    db.odm()
        .delete_one(Subject::id_field().eq("american-literature"))
        .await?;
    let roots = db.odm().tree::<Subject>().roots().await?;
    assert_eq!(roots.len(), 11);
    assert!(inconsistent(&db, "subjects", "parent", "ancestors")
        .await
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn a_delete_refused_by_a_rule_of_another_model_lifts_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&seed()).await?;
    db.odm()
        .insert_one(&Book {
            id: 1,
            title: "The Great Gatsby".into(),
            subject: Ref::new("1920s".into()),
            subject_name: String::new(),
        })
        .await?;
    let before = stored(&db, "subjects").await;
    let err = db
        .odm()
        .delete_one(Subject::id_field().eq("1920s"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::DeleteRestricted(r) if r.referenced_by == "books"),
        "{err}"
    );
    assert_eq!(
        stored(&db, "subjects").await,
        before,
        "the lift was rolled back with it"
    );
    Ok(())
}

#[tokio::test]
async fn cascade_deletes_the_whole_subtree() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&heap(0, 400, 3, None)).await?;
    sent(&db);
    // Node 1 has 133 nodes below it.
    let below = db.odm().tree::<Node>().descendants(1).await?.len();
    sent(&db);
    assert_eq!(
        db.odm().delete_one(Node::id_field().eq(1)).await?,
        below as u64 + 1
    );
    assert_eq!(sent(&db), ["hello", "find", "delete", "commitTransaction"]);
    assert_eq!(stored(&db, "nodes").await.len(), 400 - below - 1);
    assert!(inconsistent(&db, "nodes", "parent", "ancestors")
        .await
        .is_empty());
    Ok(())
}

fn folder(id: impl Into<Bson>, up: Option<Bson>) -> Folder {
    Folder {
        id: id.into(),
        up: up.map(Ref::new),
        path: Vec::new(),
    }
}

#[tokio::test]
async fn restrict_refuses_a_node_with_children_and_takes_a_whole_subtree() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&[
        folder("root", None),
        folder("a", Some("root".into())),
        folder("b", Some("a".into())),
    ])
    .await?;
    let before = stored(&db, "folders").await;
    sent(&db);
    let err = odm
        .delete_one(Folder::id_field().eq(Bson::from("a")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::DeleteRestricted(r) if r.referenced_by == "folders" && r.path == "parentId" && r.count == 1),
        "{err}"
    );
    assert_eq!(
        sent(&db),
        ["hello", "find", "aggregate", "abortTransaction"]
    );
    assert_eq!(stored(&db, "folders").await, before);
    // A leaf goes; so does a node deleted with all its children.
    assert_eq!(
        odm.delete_one(Folder::id_field().eq(Bson::from("b")))
            .await?,
        1
    );
    odm.insert_one(&folder("b", Some("a".into()))).await?;
    let all = Folder::id_field().is_in([Bson::from("a"), Bson::from("b")]);
    assert_eq!(odm.delete_many(all).await?, 2);
    assert_eq!(stored(&db, "folders").await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn hostile_ids_are_values() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    let dotted = Bson::from("a.b");
    let dollar = Bson::from("$ancestors");
    let where_ = Bson::from("$where");
    let shaped = Bson::Document(doc! { "k": "$x", "n": 1 });
    let empty = Bson::from("");
    odm.insert_many(&[
        folder(dotted.clone(), None),
        folder(dollar.clone(), Some(dotted.clone())),
        folder(where_.clone(), Some(dollar.clone())),
        folder(shaped.clone(), None),
        folder(empty.clone(), Some(shaped.clone())),
    ])
    .await?;
    let tree = odm.tree::<Folder>();
    let below: Vec<Bson> = tree
        .descendants(dotted.clone())
        .await?
        .into_iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(below.len(), 2, "{below:?}");
    // `"$ancestors"` in the new prefix is not read as the field.
    let moved = tree.move_under(dollar.clone(), shaped.clone()).await?;
    assert_eq!(moved.descendants, 1);
    let w = stored_one(&db, "folders", where_.clone()).await.unwrap();
    assert_eq!(
        w.get_array("path").unwrap(),
        &vec![shaped.clone(), dollar.clone()]
    );
    assert!(inconsistent(&db, "folders", "parentId", "path")
        .await
        .is_empty());
    let chain: Vec<Bson> = tree
        .ancestors(where_.clone())
        .await?
        .into_iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(chain, [shaped.clone(), dollar.clone()]);
    assert_eq!(tree.children(shaped.clone()).await?.len(), 2);
    // A document that would read as operators is refused, rather than matching everything.
    let operators = Bson::Document(doc! { "$ne": "nothing" });
    let err = tree.descendants(operators).await.unwrap_err();
    assert!(
        matches!(&err, Error::Encode { message, .. } if message.contains("`$ne`")),
        "{err}"
    );
    assert!(tree.verify().await?.is_consistent());
    Ok(())
}

#[tokio::test]
async fn writes_of_the_tree_fields_are_refused_and_replacements_keep_them() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&seed()).await?;
    let before = stored(&db, "subjects").await;
    sent(&db);
    for raw in [
        doc! { "$set": { "parent": "jazz-age" } },
        doc! { "$push": { "ancestors": "x" } },
        doc! { "$unset": { "ancestors.0": "" } },
        doc! { "$rename": { "name": "parent" } },
    ] {
        let err = odm
            .update_one(Subject::id_field().eq("1920s"), Update::raw(raw.clone()))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::TreeWrite { collection, .. } if collection == "subjects"),
            "{raw}: {err}"
        );
    }
    assert!(sent(&db).is_empty(), "nothing is sent");

    // A node read back and replaced keeps its place: the replacement (a `findAndModify`, since
    // books copy the name) is guarded by it.
    let mut jazz: Subject = odm.get("jazz-age").await?.unwrap();
    jazz.name = "The Jazz Age".into();
    sent(&db);
    assert_eq!(odm.replace_one(&jazz).await?.matched_count, 1);
    let replace = common::last_command(&db, "findAndModify");
    assert_eq!(
        replace.get_document("query").unwrap(),
        &doc! {
            "_id": "jazz-age",
            "parent": "1920s",
            "ancestors": { "$eq": ["american-literature", "1920s"] },
        }
    );
    // A replacement that would move it is refused.
    jazz.parent = Some(Ref::new("american-literature".into()));
    let err = odm.replace_one(&jazz).await.unwrap_err();
    assert!(
        matches!(&err, Error::TreeWrite { path, .. } if path == "parent"),
        "{err}"
    );
    jazz.parent = Some(Ref::new("1920s".into()));
    jazz.ancestors = vec![];
    let err = odm.replace_one(&jazz).await.unwrap_err();
    assert!(
        matches!(&err, Error::TreeWrite { path, .. } if path == "ancestors"),
        "{err}"
    );
    let err = odm.replace_one(&jazz).upsert(true).await.unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    let after = stored(&db, "subjects").await;
    assert_eq!(after.len(), before.len());
    assert_eq!(
        stored_one(&db, "subjects", "jazz-age")
            .await
            .unwrap()
            .get_str("name")
            .unwrap(),
        "The Jazz Age"
    );
    assert!(inconsistent(&db, "subjects", "parent", "ancestors")
        .await
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn a_renamed_subject_is_renamed_in_the_books_and_a_move_leaves_them_alone() -> odm::Result<()>
{
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&seed()).await?;
    odm.insert_one(&Book {
        id: 1,
        title: "The Great Gatsby".into(),
        subject: Ref::new("jazz-age".into()),
        subject_name: "whatever the caller says".into(),
    })
    .await?;
    let book = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(book.get_str("subject_name").unwrap(), "Jazz Age");
    // The id is a slug: renaming the subject is one field, copied on to the books.
    odm.update_by_id("jazz-age", Subject::name().set("The Jazz Age"))
        .await?;
    let book = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(book.get_str("subject_name").unwrap(), "The Jazz Age");
    // A move does not touch the books: nothing they copy changes.
    sent(&db);
    odm.tree::<Subject>().move_to_root("jazz-age").await?;
    let names = sent(&db);
    assert_eq!(
        names[names.len() - 3..],
        ["findAndModify", "update", "commitTransaction"],
        "{names:?}"
    );
    assert_eq!(stored_one(&db, "books", 1).await.unwrap(), book);
    let report = odm.verify_copies().await?;
    assert!(report.is_consistent(), "{report}");
    Ok(())
}

#[tokio::test]
async fn the_sweep_reports_and_repairs_ancestors_that_disagree_with_the_parents() -> odm::Result<()>
{
    let db = common::db().await?;
    db.odm().insert_many(&heap(0, 40, 3, None)).await?;
    let raw = db.raw().collection::<Document>("nodes");
    // A move interrupted after the node: its descendants keep the old ancestors.
    raw.update_one(
        doc! { "_id": 4 },
        doc! { "$set": { "parent": 2, "ancestors": [0, 2] } },
    )
    .await?;
    // A parent deleted behind the tree's back.
    raw.delete_one(doc! { "_id": 3 }).await?;
    // A cycle between two nodes.
    raw.update_one(doc! { "_id": 38 }, doc! { "$set": { "parent": 39 } })
        .await?;
    raw.update_one(doc! { "_id": 39 }, doc! { "$set": { "parent": 38 } })
        .await?;
    sent(&db);

    let report = db.odm().tree::<Node>().verify().await?;
    assert_eq!(
        sent(&db),
        ["find"],
        "reading is one find; nothing is written"
    );
    assert_eq!(report.checked, 39);
    let wrong: Vec<i32> = report
        .issues
        .iter()
        .filter_map(|i| match i {
            TreeIssue::WrongAncestors { id, .. } => id.as_i32(),
            _ => None,
        })
        .collect();
    // 4's children; 3's children, lifted to 0, and theirs (but those on the cycle).
    assert_eq!(wrong, [10, 11, 12, 13, 14, 15, 31, 32, 33, 34, 35, 36, 37]);
    assert!(report.issues.contains(&TreeIssue::MissingParent {
        id: Bson::Int32(10),
        parent: Bson::Int32(3),
        lifted_to: Some(Bson::Int32(0)),
    }));
    assert!(
        report
            .issues
            .iter()
            .any(|i| matches!(i, TreeIssue::Cycle { ids } if ids.len() == 2)),
        "{report:?}"
    );

    let repaired = db.odm().tree::<Node>().verify().repair(true).await?;
    assert_eq!(
        sent(&db),
        ["find", "update"],
        "all the fixes in one update command"
    );
    assert_eq!(repaired.repaired, 13);
    let after = db.odm().tree::<Node>().verify().await?;
    assert_eq!(after.issues.len(), 1, "only the cycle is left: {after:?}");
    let wrong = inconsistent(&db, "nodes", "parent", "ancestors").await;
    assert!(
        wrong.iter().all(|w| w.contains("38") || w.contains("39")),
        "{wrong:?}"
    );
    Ok(())
}

#[tokio::test]
async fn malformed_nodes_are_errors_naming_the_document_and_the_field() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&heap(0, 4, 3, None)).await?;
    let raw = db.raw().collection::<Document>("nodes");
    raw.update_one(doc! { "_id": 1 }, doc! { "$set": { "ancestors": "0" } })
        .await?;
    let tree = db.odm().tree::<Node>();
    let err = tree.verify().await.unwrap_err();
    assert!(
        matches!(&err, Error::Decode { collection, id, path, .. } if collection == "nodes" && id == "{ _id: 1 }" && path == "ancestors"),
        "{err}"
    );
    let err = tree.move_under(2, 1).await.unwrap_err();
    assert!(
        matches!(&err, Error::Decode { id, path, .. } if id == "{ _id: 1 }" && path == "ancestors"),
        "{err}"
    );
    let err = db
        .odm()
        .insert_one(&Node {
            id: 9,
            parent: Some(1),
            ancestors: vec![],
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Decode { path, .. } if path == "ancestors"),
        "{err}"
    );
    raw.update_one(
        doc! { "_id": 3 },
        doc! { "$set": { "ancestors": [0, [1]] } },
    )
    .await?;
    let err = tree.depth(3).await.unwrap_err();
    assert!(
        matches!(&err, Error::Decode { id, path, .. } if id == "{ _id: 3 }" && path == "ancestors.1"),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn inserts_under_a_branch_that_moves_meanwhile_get_its_new_ancestors() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    db.odm().insert_many(&heap(0, 121, 3, None)).await?;
    // 60 inserts under nodes of the fourth level while their grandparents (the second level)
    // move from one node of the first level to another, and on again, interleaved.
    let mut tasks = Vec::new();
    for i in 0..60 {
        let x = 4 + i % 9;
        let to = 1 + ((x - 1) / 3 + 1 + i / 9) % 3;
        let odm = db.odm().clone();
        tasks.push(tokio::spawn(async move {
            odm.tree::<Node>().move_under(x, to).await.map(|_| ())
        }));
        let odm = db.odm().clone();
        tasks.push(tokio::spawn(async move {
            let node = Node {
                id: 1000 + i,
                parent: Some(40 + i),
                ancestors: Vec::new(),
            };
            odm.insert_one(&node).await.map(|_| ())
        }));
    }
    for task in tasks {
        task.await.expect("task")?;
    }
    let wrong = inconsistent(&db, "nodes", "parent", "ancestors").await;
    assert!(
        wrong.is_empty(),
        "{} wrong, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(3)]
    );
    assert_eq!(stored(&db, "nodes").await.len(), 181);
    Ok(())
}

#[tokio::test]
async fn an_insert_in_a_transaction_conflicts_with_a_move_of_its_branch() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&heap(0, 121, 3, None)).await?;
    // The insert under 40 (below 13, below 4) runs in the caller's transaction, left open...
    let mut session = db.odm().start_session().await?;
    session.start_transaction().await?;
    let node = Node {
        id: 1000,
        parent: Some(40),
        ancestors: Vec::new(),
    };
    db.odm().insert_one(&node).session(&mut session).await?;
    // ... while 4 moves from 1 to 2: the move writes 40, which the insert has marked, so it
    // waits for the insert to commit (retrying its write conflicts), then sees the new node.
    let odm = db.odm().clone();
    let moving = tokio::spawn(async move { odm.tree::<Node>().move_under(4, 2).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    session.commit_transaction().await?;
    moving.await.expect("task")?;
    let new = stored_one(&db, "nodes", 1000).await.unwrap();
    assert_eq!(
        new.get_array("ancestors").unwrap(),
        &vec![Bson::Int32(0), 2.into(), 4.into(), 13.into(), 40.into()]
    );
    assert!(inconsistent(&db, "nodes", "parent", "ancestors")
        .await
        .is_empty());
    Ok(())
}
