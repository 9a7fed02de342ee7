//! The verify/repair sweep of a tree: every node's `ancestors` against its parent chain.

use std::collections::HashMap;
use std::fmt;

use bson::{doc, Bson};

use super::node::{self, Node};
use super::{TreeInfo, TreeModel};
use crate::document::IdKey;
use crate::engine::{Effect, Own};
use crate::{Error, Odm, Result};

/// Something [`VerifyTree`] found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TreeIssue {
    /// The node's `ancestors` differ from its parent chain. Repaired by writing `expected`.
    WrongAncestors {
        /// The node's `_id`.
        id: Bson,
        /// What it lists.
        stored: Vec<Bson>,
        /// Its parent chain, root first.
        expected: Vec<Bson>,
    },
    /// The node's parent does not exist. Repaired by lifting the node under the nearest
    /// ancestor it lists that exists (a root when none does), `expected` being that ancestor's
    /// chain.
    MissingParent {
        /// The node's `_id`.
        id: Bson,
        /// The parent it names.
        parent: Bson,
        /// The parent it gets on repair (`None`: it becomes a root).
        lifted_to: Option<Bson>,
    },
    /// These nodes are each other's ancestors through their parents (concurrent moves without
    /// transactions can do that). Not repaired: move one of them with
    /// [`Tree::move_to_root`](super::Tree::move_to_root) or
    /// [`Tree::move_under`](super::Tree::move_under); the nodes below them are not checked.
    Cycle {
        /// The nodes on the cycle, each the parent of the one before.
        ids: Vec<Bson>,
    },
}

/// What [`VerifyTree`] checked, found and repaired.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TreeReport {
    /// How many nodes were read.
    pub checked: u64,
    /// What was wrong.
    pub issues: Vec<TreeIssue>,
    /// How many nodes the repair rewrote (a node changed since it was read is left alone:
    /// verify again).
    pub repaired: u64,
}

impl TreeReport {
    /// Whether every node's ancestors agreed with its parent chain.
    pub fn is_consistent(&self) -> bool {
        self.issues.is_empty()
    }
}

impl fmt::Display for TreeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} node(s) checked, {} issue(s), {} repaired",
            self.checked,
            self.issues.len(),
            self.repaired
        )
    }
}

/// Builder returned by [`Tree::verify`](super::Tree::verify); `.await` it.
///
/// Reads every node's `parent` and `ancestors` (one `find` sorted by `_id`, plus `getMore`s;
/// the nodes' places are held in memory, a few dozen bytes per node plus its ids) and computes
/// each node's chain from the parents, which are the truth. Reports nodes whose `ancestors`
/// differ ([`TreeIssue::WrongAncestors`]), whose parent is missing
/// ([`TreeIssue::MissingParent`]) and parent cycles ([`TreeIssue::Cycle`]).
///
/// With `.repair(true)`, the nodes found wrong are rewritten: one `update` command per 100,000
/// nodes (or 8 MiB of statements), one statement per node, each only where the node still has
/// the parent and ancestors read (so that a node moved meanwhile is left to the move).
/// Nothing is written otherwise. A malformed node (`ancestors` not an array, ...) is
/// [`Error::Decode`] naming it.
#[must_use = "the sweep runs when awaited"]
#[derive(Debug)]
pub struct VerifyTree<'a, T> {
    odm: &'a Odm,
    repair: bool,
    _model: std::marker::PhantomData<fn() -> T>,
}

/// A node's computed chain: known, being followed, or on/under a cycle.
#[derive(Clone)]
enum Chain {
    Known(Vec<Bson>),
    Broken,
}

impl<'a, T: TreeModel> VerifyTree<'a, T> {
    pub(crate) fn new(odm: &'a Odm) -> Self {
        VerifyTree {
            odm,
            repair: false,
            _model: std::marker::PhantomData,
        }
    }

    /// Rewrites what is wrong (default: only report).
    pub fn repair(mut self, yes: bool) -> Self {
        self.repair = yes;
        self
    }

    async fn run(self) -> Result<TreeReport> {
        sweep(self.odm, T::COLLECTION, T::INFO, self.repair).await
    }
}

/// The sweep of [`VerifyTree`] over the tree stored in `collection`.
pub(crate) async fn sweep(
    odm: &Odm,
    collection: &str,
    info: TreeInfo,
    repair: bool,
) -> Result<TreeReport> {
    let mut nodes: Vec<Node> = Vec::new();
    let work = crate::sweep::Work::of(repair, || format!("tree {collection}"));
    let mut batches =
        crate::sweep::Batches::open(odm, collection, node::projection(info), 10_000, work).await?;
    while let Some(batch) = batches.next().await? {
        for d in &batch {
            nodes.push(node::parse_in(collection, info, d)?);
        }
    }
    let index: HashMap<IdKey, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (IdKey::of(&n.id), i))
        .collect();
    let mut report = TreeReport {
        checked: nodes.len() as u64,
        ..TreeReport::default()
    };
    // The parent each node has after repair: its own, or for a missing one the nearest
    // listed ancestor that exists.
    let parents: Vec<Option<usize>> = nodes
        .iter()
        .map(|n| {
            let p = n.parent.as_ref()?;
            if let Some(&i) = index.get(&IdKey::of(p)) {
                return Some(i);
            }
            let lifted = n
                .ancestors
                .iter()
                .rev()
                .find_map(|a| index.get(&IdKey::of(a)).copied());
            report.issues.push(TreeIssue::MissingParent {
                id: n.id.clone(),
                parent: p.clone(),
                lifted_to: lifted.map(|i| nodes[i].id.clone()),
            });
            lifted
        })
        .collect();
    let chains = chains_of(&nodes, &parents, &mut report);
    let mut fixes: Vec<Own<'_>> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let Some(Chain::Known(expected)) = &chains[i] else {
            continue;
        };
        let parent = parents[i].map(|p| nodes[p].id.clone());
        if *expected == n.ancestors && parent == n.parent {
            continue;
        }
        if *expected != n.ancestors {
            report.issues.push(TreeIssue::WrongAncestors {
                id: n.id.clone(),
                stored: n.ancestors.clone(),
                expected: expected.clone(),
            });
        }
        let mut q = crate::literal::eq("_id", n.id.clone());
        q.insert(
            info.parent,
            crate::literal::condition(n.parent.clone().unwrap_or(Bson::Null)),
        );
        q.insert(info.ancestors, doc! { "$eq": n.ancestors.clone() });
        let set = doc! { "$set": {
            info.parent: parent.unwrap_or(Bson::Null),
            info.ancestors: expected.clone(),
        } };
        fixes.push(Own::update(collection, q, set, Effect::Derived, "tree repair").one());
    }
    if repair && !fixes.is_empty() {
        report.repaired = send_updates(odm, collection, fixes).await?;
    }
    Ok(report)
}

/// Each node's chain of ancestors as the repaired parents give it (`parents`, by index into
/// `nodes`), root first; `Broken` for a node on or below a cycle, which is reported.
fn chains_of(
    nodes: &[Node],
    parents: &[Option<usize>],
    report: &mut TreeReport,
) -> Vec<Option<Chain>> {
    let mut chains: Vec<Option<Chain>> = vec![None; nodes.len()];
    for start in 0..nodes.len() {
        let mut path: Vec<usize> = Vec::new();
        let mut on_path: HashMap<usize, usize> = HashMap::new();
        let mut at = Some(start);
        let base = loop {
            let Some(i) = at else {
                break Chain::Known(Vec::new());
            };
            match &chains[i] {
                // A parent computed earlier: its chain, then itself.
                Some(Chain::Known(done)) => {
                    let mut chain = done.clone();
                    chain.push(nodes[i].id.clone());
                    break Chain::Known(chain);
                }
                Some(Chain::Broken) => break Chain::Broken,
                None => {}
            }
            if let Some(&pos) = on_path.get(&i) {
                report.issues.push(TreeIssue::Cycle {
                    ids: path[pos..].iter().map(|&j| nodes[j].id.clone()).collect(),
                });
                break Chain::Broken;
            }
            on_path.insert(i, path.len());
            path.push(i);
            at = parents[i];
        };
        let mut chain = base;
        for &i in path.iter().rev() {
            chains[i] = Some(chain.clone());
            if let Chain::Known(c) = &mut chain {
                c.push(nodes[i].id.clone());
            }
        }
    }
    chains
}

/// Sends the repairs of `collection`'s nodes as unordered `update` commands, as many
/// statements per command as fit. Returns how many documents were modified; the first
/// statement refused fails the whole repair (after the rest were sent).
pub(super) async fn send_updates(odm: &Odm, collection: &str, fixes: Vec<Own<'_>>) -> Result<u64> {
    let all = odm
        .write_own_all(fixes, false, "the nodes to repair", None)
        .await?;
    if let Some(first) = all.refused.first() {
        return Err(Error::Unsupported(format!(
            "repairing the tree `{collection}`: {} update(s) refused, the first: {}",
            all.refused.len(),
            first.message
        )));
    }
    Ok(all.modified)
}

impl<'a, T: TreeModel> std::future::IntoFuture for VerifyTree<'a, T> {
    type Output = Result<TreeReport>;
    type IntoFuture = crate::engine::BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
