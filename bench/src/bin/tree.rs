//! Tree: moving a subtree of 2,000 nodes (in a tree of 10,000, depth 8) back and forth between
//! two parents, three ways, in one run on one server: (a) odm's `move_under`, (b) the same
//! move written by hand with the driver (the node's update, then one pipeline update of every
//! descendant's ancestors), (c) the node's update, then one `update` per descendant. (a) and
//! (b) are measured in a transaction and without one; (c) without.
//!
//! `cargo xtask bench` runs it (release build). Moving costs (c) one round trip per descendant
//! and (a) a fixed number, so their ratio grows with the round trip: run it with
//! `ODM_BENCH_RTT_US=1000` to add one (see `odm_bench::latency`).

use std::future::IntoFuture;
use std::time::Duration;

use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, Document};
use odm::mongodb::options::{FindOneAndUpdateOptions, ReturnDocument};
use odm::mongodb::{ClientSession, Collection};
use odm::prelude::*;
use odm::TransactionMode;
use odm_bench::{median, show, show_commands, Bench};

/// The node that moves: 2,000 nodes with its descendants.
const MOVED: i32 = 1;
const SUBTREE: i32 = 2_000;
const OTHERS: i32 = 7_999;
/// The two parents it moves between, inside the other 7,999 nodes.
const TARGETS: [i32; 2] = [2_006, 2_011];

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "nodes", tree)]
struct Node {
    #[serde(rename = "_id")]
    id: i32,
    parent: Option<i32>,
    ancestors: Vec<i32>,
}

/// `n` nodes laid out as a heap with `branching` children each, ids from `first`.
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

async fn seed(bench: &Bench) -> odm::Result<()> {
    bench.odm.sync_indexes().await?;
    let mut all = heap(0, 1, 1, None);
    all.extend(heap(MOVED, SUBTREE, 3, Some(0)));
    all.extend(heap(MOVED + SUBTREE, OTHERS, 4, Some(0)));
    bench.odm.insert_many(&all).await?;
    Ok(())
}

/// (a) odm.
async fn odm_move(bench: &Bench, to: i32, mode: TransactionMode) -> odm::Result<u64> {
    let moved = bench
        .odm
        .tree::<Node>()
        .move_under(MOVED, to)
        .transaction(mode)
        .await?;
    Ok(moved.descendants)
}

/// The parent's ancestors (marked inside a transaction, as a careful hand-written move must,
/// so that a concurrent move of the parent's branch conflicts), then the node's update.
async fn node_update(
    nodes: &Collection<Document>,
    to: i32,
    mut session: Option<&mut ClientSession>,
) -> odm::Result<Vec<Bson>> {
    let projection = doc! { "ancestors": 1 };
    let parent = match session.as_deref_mut() {
        Some(s) => {
            nodes
                .find_one_and_update(doc! { "_id": to }, doc! { "$set": { "_mark": true } })
                .projection(projection)
                .session(s)
                .await?
        }
        None => {
            nodes
                .find_one(doc! { "_id": to })
                .projection(projection)
                .await?
        }
    }
    .expect("the parent exists");
    let mut ancestors = parent.get_array("ancestors").expect("an array").clone();
    if ancestors.contains(&Bson::Int32(MOVED)) {
        panic!("a cycle");
    }
    ancestors.push(Bson::Int32(to));
    let options = FindOneAndUpdateOptions::builder()
        .projection(doc! { "ancestors": 1 })
        .return_document(ReturnDocument::Before)
        .build();
    let update = doc! { "$set": { "parent": to, "ancestors": ancestors.clone() } };
    let action = nodes
        .find_one_and_update(doc! { "_id": MOVED }, update)
        .with_options(options);
    match session {
        Some(s) => action.session(s).await?,
        None => action.await?,
    }
    .expect("the node exists");
    Ok(ancestors)
}

/// (b) By hand: the node, then one pipeline update of its descendants.
async fn hand_written(bench: &Bench, to: i32, transaction: bool) -> odm::Result<u64> {
    let nodes = bench.db.collection::<Document>("nodes");
    let mut session = bench.db.client().start_session().await?;
    if transaction {
        session.start_transaction().await?;
    }
    let s = transaction.then_some(&mut session);
    let mut s = s;
    let mut prefix = node_update(&nodes, to, s.as_deref_mut()).await?;
    prefix.push(Bson::Int32(MOVED));
    let pipeline = vec![doc! { "$set": { "ancestors": { "$concatArrays": [
        { "$literal": prefix },
        { "$slice": [
            "$ancestors",
            { "$add": [{ "$indexOfArray": ["$ancestors", MOVED] }, 1] },
            { "$max": [1, { "$size": "$ancestors" }] },
        ] },
    ] } } }];
    let action = nodes.update_many(doc! { "ancestors": MOVED }, pipeline);
    let result = match s.as_deref_mut() {
        Some(s) => action.session(s).await?,
        None => action.await?,
    };
    if let Some(s) = s {
        nodes
            .update_one(doc! { "_id": to }, doc! { "$unset": { "_mark": "" } })
            .session(&mut *s)
            .await?;
        s.commit_transaction().await?;
    }
    Ok(result.modified_count)
}

/// (c) The node, then one update per descendant.
async fn naive(bench: &Bench, to: i32) -> odm::Result<u64> {
    let nodes = bench.db.collection::<Document>("nodes");
    let prefix = node_update(&nodes, to, None).await?;
    let below: Vec<Document> = nodes
        .find(doc! { "ancestors": MOVED })
        .projection(doc! { "ancestors": 1 })
        .await?
        .try_collect()
        .await?;
    let mut modified = 0;
    for d in below {
        let old = d.get_array("ancestors").expect("an array");
        let at = old
            .iter()
            .position(|a| *a == Bson::Int32(MOVED))
            .expect("a descendant");
        let mut new = prefix.clone();
        new.extend(old[at..].iter().cloned());
        modified += nodes
            .update_one(
                doc! { "_id": d.get("_id").cloned() },
                doc! { "$set": { "ancestors": new } },
            )
            .await?
            .modified_count;
    }
    Ok(modified)
}

struct Row {
    name: &'static str,
    median: Duration,
    commands: Vec<String>,
}

async fn check(bench: &Bench) -> odm::Result<()> {
    let report = bench.odm.tree::<Node>().verify().await?;
    assert!(report.is_consistent(), "{report}");
    Ok(())
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("tree").await?;
    seed(&bench).await?;
    let runs = 21;
    let naive_runs = 3;
    let expected = (SUBTREE - 1) as u64;
    let mut target = 0;
    let mut next = || {
        target = 1 - target;
        TARGETS[target]
    };
    // Warm up every way (the first odm move also asks the server whether it has transactions).
    odm_move(&bench, next(), TransactionMode::Auto).await?;
    hand_written(&bench, next(), true).await?;
    odm_move(&bench, next(), TransactionMode::Never).await?;
    hand_written(&bench, next(), false).await?;
    check(&bench).await?;

    let ways: [(&'static str, usize); 5] = [
        ("(a) odm, transaction", 0),
        ("(b) by hand, transaction", 1),
        ("(a) odm, no transaction", 2),
        ("(b) by hand, no transaction", 3),
        ("(c) update per descendant", 4),
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); ways.len()];
    let mut commands: Vec<Vec<String>> = vec![Vec::new(); ways.len()];
    for _ in 0..runs {
        for (_, way) in &ways[..4] {
            let to = next();
            let (t, cmds, moved) = match way {
                0 => {
                    bench
                        .measure(|| odm_move(&bench, to, TransactionMode::Auto))
                        .await
                }
                1 => bench.measure(|| hand_written(&bench, to, true)).await,
                2 => {
                    bench
                        .measure(|| odm_move(&bench, to, TransactionMode::Never))
                        .await
                }
                _ => bench.measure(|| hand_written(&bench, to, false)).await,
            };
            assert_eq!(moved?, expected);
            samples[*way].push(t);
            commands[*way] = cmds;
        }
    }
    for _ in 0..naive_runs {
        let to = next();
        let (t, cmds, moved) = bench.measure(|| naive(&bench, to)).await;
        assert_eq!(moved?, expected);
        samples[4].push(t);
        commands[4] = cmds;
    }
    check(&bench).await?;
    // One round trip on this connection: a `find` by `_id`.
    let nodes = bench.db.collection::<Document>("nodes");
    let mut trips = Vec::new();
    for _ in 0..201 {
        let (t, _, found) = bench
            .measure(|| nodes.find_one(doc! { "_id": MOVED }).into_future())
            .await;
        found?.expect("the node");
        trips.push(t);
    }
    let trip = median(trips);
    let rows: Vec<Row> = ways
        .iter()
        .map(|(name, way)| Row {
            name,
            median: median(samples[*way].clone()),
            commands: commands[*way].clone(),
        })
        .collect();
    println!();
    println!(
        "move a subtree of {SUBTREE} nodes in a tree of {} (depth 8); medians of {runs} runs ((c): {naive_runs})",
        1 + SUBTREE + OTHERS
    );
    for row in &rows {
        println!(
            "  {:<30} {:>10}   commands: {}",
            row.name,
            show(row.median),
            show_commands(&row.commands)
        );
    }
    let ratio = |a: usize, b: usize| rows[a].median.as_secs_f64() / rows[b].median.as_secs_f64();
    println!(
        "  a/b = {:.3} in a transaction, {:.3} without (target <= 1.05)    c/a = {:.0} (target >= 50)",
        ratio(0, 1),
        ratio(2, 3),
        ratio(4, 2)
    );
    // The gap between (a) and (c) is one round trip per descendant: on this machine's loopback
    // a round trip costs little next to the server's own work per document. Estimated for a
    // network where a round trip takes 1 ms, every command of each way paying the difference:
    let lan = Duration::from_millis(1).saturating_sub(trip).as_secs_f64();
    let at_lan = |row: &Row| row.median.as_secs_f64() + lan * row.commands.len() as f64;
    println!(
        "  one round trip here: {}; estimated with 1 ms round trips: c/a = {:.0} (a: {}, c: {})",
        show(trip),
        at_lan(&rows[4]) / at_lan(&rows[2]),
        show(Duration::from_secs_f64(at_lan(&rows[2]))),
        show(Duration::from_secs_f64(at_lan(&rows[4]))),
    );
    bench.finish().await
}
