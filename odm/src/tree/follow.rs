//! A tree kept right after another program moved a node (wrote its `parent` without its
//! `ancestors`, or inserted or replaced it): the node's ancestors and those of its whole
//! subtree rewritten from its parent's chain (see [`crate::follower`]). Reads the present
//! state and writes only what differs, so running it twice changes nothing.

use std::collections::{HashMap, HashSet};

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;

use super::TreeInfo;
use crate::document::IdKey;
use crate::engine::{Effect, Own};
use crate::{Odm, Result};

/// What [`repair_moved`] did.
#[derive(Debug, Default)]
pub(crate) struct Repaired {
    /// Nodes whose ancestors were rewritten.
    pub(crate) nodes: u64,
    /// Nodes moved under their own subtree: left as they are (the tree sweep reports them).
    pub(crate) cycles: Vec<Bson>,
    /// Nodes whose parent is no node of the tree (an array, or an id no node has): left as
    /// they are, with their subtrees.
    pub(crate) malformed: Vec<Malformed>,
}

/// A node another program left in a state no ancestors can be computed from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Malformed {
    /// The node's `_id`.
    pub(crate) id: Bson,
    /// The offending field (the tree's `parent`).
    pub(crate) path: &'static str,
    /// What is wrong with it.
    pub(crate) message: String,
}

/// What a node's ancestors are computed from.
enum Chain {
    /// Its ancestors: its parent's, then its parent.
    Of(Vec<Bson>),
    /// Its parent cannot be a node, or names none.
    Malformed(String),
    /// Its parent's own `ancestors` is missing or not an array: the highest node above it in
    /// that state, whose repair rewrites this node's with its subtree.
    Above(Bson),
}

/// Rewrites the ancestors of the nodes `ids` of `collection` and of every node below them
/// from the nodes' parents as they are now. The subtree is found by `parent`, level by level,
/// so that a node whose stored `ancestors` is missing or malformed (another program's write)
/// is found and rewritten too; a parent whose own `ancestors` is missing or malformed is
/// repaired first, from the highest node above it in that state. A node whose `parent` is an
/// array, or names no node, is left as it is and returned in [`Repaired::malformed`]; a node
/// that does not exist is passed over.
///
/// Commands per node: one `find` of the node, one of its parent (and one per node above it
/// whose `ancestors` is malformed), one per level of its subtree (the children of the level's
/// nodes, by the index on `parent`, per [chunk](crate::batch) of ids), and one `update`
/// command with a statement per node to rewrite, each conditioned on the ancestors it read.
pub(crate) async fn repair_moved(
    odm: &Odm,
    collection: &str,
    info: TreeInfo,
    ids: &[Bson],
) -> Result<Repaired> {
    let mut out = Repaired::default();
    let mut queue: Vec<Bson> = ids.to_vec();
    let mut done: HashSet<IdKey> = HashSet::new();
    let mut at = 0;
    while let Some(id) = queue.get(at).cloned() {
        at += 1;
        if !done.insert(IdKey::of(&id)) {
            continue;
        }
        let Some(node) = one(odm, collection, info, id.clone()).await? else {
            continue;
        };
        let chain = match node.get(info.parent) {
            None | Some(Bson::Null) => Vec::new(),
            Some(parent) => match chain_of(odm, collection, info, parent).await? {
                Chain::Of(chain) => chain,
                Chain::Malformed(message) => {
                    out.malformed.push(Malformed {
                        id,
                        path: info.parent,
                        message,
                    });
                    continue;
                }
                Chain::Above(top) if done.contains(&IdKey::of(&top)) => {
                    // Above it a loop of malformed nodes: left to the sweep, as a cycle.
                    out.cycles.push(id);
                    continue;
                }
                Chain::Above(top) => {
                    queue.push(top);
                    continue;
                }
            },
        };
        if chain.iter().any(|a| IdKey::of(a) == IdKey::of(&id)) {
            out.cycles.push(id);
            continue;
        }
        let mut fixes = Vec::new();
        if let Some(f) = fix(collection, info, &node, &chain) {
            fixes.push(f);
        }
        fixes.extend(subtree_fixes(odm, collection, info, &id, chain).await?);
        if !fixes.is_empty() {
            out.nodes += super::verify::send_updates(odm, collection, fixes).await?;
        }
    }
    Ok(out)
}

/// The node `id` with its `parent` and `ancestors` (one `find`, limit 1).
async fn one(odm: &Odm, collection: &str, info: TreeInfo, id: Bson) -> Result<Option<Document>> {
    let options = FindOptions::builder()
        .projection(doc! { info.parent: 1, info.ancestors: 1 })
        .limit(1)
        .build();
    let filter = crate::literal::eq("_id", id);
    let found = crate::engine::find_documents(odm, collection, filter, options, None).await?;
    Ok(found.into_iter().next())
}

/// The ancestors a child of `parent` gets, read from the parent (and, when the parent's own
/// `ancestors` is malformed, the nodes above it in that state, at most [`MAX_WALK`]).
async fn chain_of(odm: &Odm, collection: &str, info: TreeInfo, parent: &Bson) -> Result<Chain> {
    if let Bson::Array(_) = parent {
        return Ok(Chain::Malformed(format!(
            "an array is no node's id: {parent}"
        )));
    }
    let Some(p) = one(odm, collection, info, parent.clone()).await? else {
        return Ok(Chain::Malformed(format!(
            "names no node of `{collection}`: {parent}"
        )));
    };
    if let Some(Bson::Array(above)) = p.get(info.ancestors) {
        let mut chain = above.clone();
        chain.push(parent.clone());
        return Ok(Chain::Of(chain));
    }
    // The parent's ancestors are missing or not an array: repair from the highest node in
    // that state (whose parent's are an array, or which is a root).
    let mut top = p;
    let mut seen: HashSet<IdKey> = HashSet::from([IdKey::of(parent)]);
    for _ in 0..MAX_WALK {
        let Some(up) = top.get(info.parent).filter(|b| **b != Bson::Null).cloned() else {
            break;
        };
        if matches!(up, Bson::Array(_)) || !seen.insert(IdKey::of(&up)) {
            break;
        }
        match one(odm, collection, info, up).await? {
            Some(next) if !matches!(next.get(info.ancestors), Some(Bson::Array(_))) => top = next,
            _ => break,
        }
    }
    Ok(Chain::Above(
        top.get("_id").cloned().unwrap_or_else(|| parent.clone()),
    ))
}

/// The most nodes walked up from a parent whose `ancestors` is malformed.
const MAX_WALK: usize = 1_000;

/// The statements rewriting the ancestors of the nodes below `id` (whose ancestors are
/// `chain`) that differ from their parents' chains: the children of each level read by
/// `parent`, a node met twice (a cycle below) read once.
async fn subtree_fixes<'c>(
    odm: &Odm,
    collection: &'c str,
    info: TreeInfo,
    id: &Bson,
    chain: Vec<Bson>,
) -> Result<Vec<Own<'c>>> {
    let mut fixes = Vec::new();
    let mut seen: HashSet<IdKey> = HashSet::from([IdKey::of(id)]);
    // The nodes of the level, with the ancestors their children get.
    let mut level: HashMap<IdKey, Vec<Bson>> = HashMap::new();
    let mut below = chain;
    below.push(id.clone());
    level.insert(IdKey::of(id), below);
    let mut ids = vec![id.clone()];
    while !ids.is_empty() {
        let mut next_ids = Vec::new();
        let mut next = HashMap::new();
        for chunk in crate::batch::chunks_of(&ids) {
            let options = FindOptions::builder()
                .projection(doc! { info.parent: 1, info.ancestors: 1 })
                .build();
            let children = crate::engine::find_documents(
                odm,
                collection,
                crate::literal::is_in(info.parent, chunk),
                options,
                None,
            )
            .await?;
            for child in children {
                let (Some(child_id), Some(parent)) = (child.get("_id"), child.get(info.parent))
                else {
                    continue;
                };
                let Some(chain) = level.get(&IdKey::of(parent)) else {
                    continue;
                };
                if !seen.insert(IdKey::of(child_id)) {
                    continue;
                }
                if let Some(f) = fix(collection, info, &child, chain) {
                    fixes.push(f);
                }
                let mut below = chain.clone();
                below.push(child_id.clone());
                next.insert(IdKey::of(child_id), below);
                next_ids.push(child_id.clone());
            }
        }
        level = next;
        ids = next_ids;
    }
    Ok(fixes)
}

/// The statement rewriting `node`'s ancestors to `new`, conditioned on what was read (a
/// missing field on its absence); `None` when they are already `new`.
fn fix<'c>(collection: &'c str, info: TreeInfo, node: &Document, new: &[Bson]) -> Option<Own<'c>> {
    let id = node.get("_id")?;
    let stored = node.get(info.ancestors);
    if let Some(Bson::Array(old)) = stored {
        if old.as_slice() == new {
            return None;
        }
    }
    let mut q = crate::literal::eq("_id", id.clone());
    match stored {
        Some(old) => q.insert(info.ancestors, doc! { "$eq": old.clone() }),
        None => q.insert(info.ancestors, doc! { "$exists": false }),
    };
    let set = doc! { "$set": { info.ancestors: new.to_vec() } };
    Some(Own::update(collection, q, set, Effect::Derived, "tree repair").one())
}

/// What [`after_deleted`] did.
#[derive(Debug, Default)]
pub(crate) struct AfterDelete {
    /// Nodes whose ancestors lost the deleted nodes (`lift`).
    pub(crate) lifted: u64,
    /// Nodes below the deleted ones deleted with them (`cascade`).
    pub(crate) deleted: u64,
    /// The children left under deleted nodes (`restrict`, which cannot refuse a delete that
    /// is done).
    pub(crate) restricted: Option<crate::error::DeleteRestricted>,
    /// Children of deleted nodes (`lift`) whose `ancestors` is not an array, which cannot
    /// tell the nearest ancestor left: left as they are.
    pub(crate) malformed: Vec<Malformed>,
}

/// The most children a `restrict` rule's report names.
const LISTED: usize = crate::relations::DeleteRestricted::LISTED;

/// Applies the tree's delete rule to the nodes `ids` another program deleted, as odm's own
/// delete applies it before deleting (see [`super::delete`]): `lift` takes them out of every
/// descendant's ancestors and gives their children the nearest ancestor left; `cascade`
/// deletes every node below them (whose own references' rules follow from their deletes'
/// events); `restrict` counts the children left, to report. Reads the present state: applied
/// twice, it finds nothing more to do.
///
/// Commands per [chunk](crate::batch) of ids: `lift`, two `update`s (a `$pullAll` of the
/// ids from the ancestors of the nodes below them, then a pipeline setting the parent of
/// their children to the last ancestor left, both on nodes whose `ancestors` is an array) and
/// one `find` of the children left (their `ancestors` is not one: returned in
/// [`AfterDelete::malformed`]); `cascade`, one `delete`; `restrict`, one `aggregate` counting
/// the children and, when there are, one `find` of the first
/// [`LISTED`] of them.
pub(crate) async fn after_deleted(
    odm: &Odm,
    collection: &str,
    info: TreeInfo,
    ids: &[Bson],
) -> Result<AfterDelete> {
    use crate::Error;
    let coll = odm.own_database().collection::<Document>(collection);
    let error = |filter: &Document, e| {
        let target = crate::error::show_filter(filter);
        Error::from_write(collection, || target, e)
    };
    let mut out = AfterDelete::default();
    let chunks = crate::batch::chunks_within(
        ids.to_vec(),
        crate::batch::MAX_IDS_BYTES / 2,
        crate::batch::MAX_IDS,
    );
    for chunk in chunks {
        match info.on_delete {
            super::DeleteRule::Lift => lift(odm, collection, info, chunk, &mut out).await?,
            super::DeleteRule::Cascade => {
                let below = crate::literal::is_in(info.ancestors, chunk);
                let write = Own::delete(collection, below, "tree delete");
                out.deleted += odm.write_own(write, None).await?.matched;
            }
            super::DeleteRule::Restrict => {
                let children = crate::literal::is_in(info.parent, chunk);
                let counted = coll.count_documents(children.clone()).await;
                let count = counted.map_err(|e| error(&children, e))?;
                if count == 0 {
                    continue;
                }
                let r = out
                    .restricted
                    .get_or_insert(crate::relations::DeleteRestricted {
                        collection: collection.to_owned(),
                        referenced_by: collection.to_owned(),
                        path: info.parent.to_owned(),
                        count: 0,
                        chain: Vec::new(),
                        named: Default::default(),
                    });
                r.count += count;
                // The children left are named, a bounded list: one `find` more.
                let room = LISTED.saturating_sub(r.named.holders.len());
                if room > 0 {
                    let options = FindOptions::builder()
                        .projection(doc! { "_id": 1, info.parent: 1 })
                        .limit(room as i64)
                        .build();
                    let found =
                        crate::engine::find_documents(odm, collection, children, options, None)
                            .await?;
                    for child in found {
                        r.named.holders.extend(child.get("_id").cloned());
                        let parent = child.get(info.parent).cloned();
                        if let Some(p) = parent.filter(|p| !r.named.deleted.contains(p)) {
                            if r.named.deleted.len() < LISTED {
                                r.named.deleted.push(p);
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The `lift` rule after the nodes `chunk` were deleted: they leave the ancestors of every
/// node below them, and their children take the last ancestor left as their parent. Only
/// nodes whose `ancestors` is an array are written (a `$pullAll` or an `$arrayElemAt` would
/// fail on anything else); the children left are read and returned as malformed.
async fn lift(
    odm: &Odm,
    collection: &str,
    info: TreeInfo,
    chunk: Vec<Bson>,
    out: &mut AfterDelete,
) -> Result<()> {
    let is_array = doc! { info.ancestors: { "$type": "array" } };
    let below = doc! { "$and": [
        crate::literal::is_in(info.ancestors, chunk.clone()),
        is_array.clone(),
    ] };
    // The tree's own fields, kept by the ODM: no writer's version moves.
    let pull = crate::literal::pull_all(info.ancestors, chunk.clone());
    let write = Own::update(collection, below, pull, Effect::Derived, "tree lift");
    out.lifted += odm.write_own(write, None).await?.modified;
    let last = format!("${}", info.ancestors);
    let reparent = vec![doc! { "$set": {
        info.parent: { "$ifNull": [{ "$arrayElemAt": [last.as_str(), -1] }, Bson::Null] },
    } }];
    let children = crate::literal::is_in(info.parent, chunk);
    let arrays = doc! { "$and": [children.clone(), is_array] };
    let write = Own::update(collection, arrays, reparent, Effect::Derived, "tree lift");
    odm.write_own(write, None).await?;
    let options = FindOptions::builder().projection(doc! { "_id": 1 }).build();
    let left = crate::engine::find_documents(odm, collection, children, options, None).await?;
    for d in left {
        let Some(id) = d.get("_id").cloned() else {
            continue;
        };
        out.malformed.push(Malformed {
            id,
            path: info.ancestors,
            message: format!(
                "not an array: the node's parent was deleted, and its `{}` cannot tell the nearest ancestor left",
                info.ancestors
            ),
        });
    }
    Ok(())
}
