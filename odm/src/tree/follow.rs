//! A tree kept right after another program moved a node (wrote its `parent` without its
//! `ancestors`, or inserted or replaced it): the node's ancestors and those of its whole
//! subtree rewritten from its parent's chain (see [`crate::follower`]). Reads the present
//! state and writes only what differs, so running it twice changes nothing.

use std::collections::{HashMap, HashSet};

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;

use super::TreeInfo;
use crate::populate::IdKey;
use crate::{Odm, Result};

/// What [`repair_moved`] did.
#[derive(Debug, Default)]
pub(crate) struct Repaired {
    /// Nodes whose ancestors were rewritten.
    pub(crate) nodes: u64,
    /// Nodes moved under their own subtree: left as they are (the tree sweep reports them).
    pub(crate) cycles: Vec<Bson>,
}

/// The ids a field holds: an array's elements, nothing for anything else.
fn ids_in(doc: &Document, path: &str) -> Vec<Bson> {
    match doc.get(path) {
        Some(Bson::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

/// Rewrites the ancestors of the nodes `ids` of `collection` and of every node below them
/// from the nodes' parents as they are now. The subtree is found by `parent`, level by level,
/// so that a node whose stored `ancestors` is missing or malformed (another program's write)
/// is found and rewritten too. A node whose parent is missing, or that does not exist, is left
/// to [`VerifyTree`](super::VerifyTree).
///
/// Commands per node: one `find` of the node, one of its parent, one per level of its subtree
/// (the children of the level's nodes, by the index on `parent`, per
/// [chunk](crate::batch) of ids), and one `update` command with a statement per node to
/// rewrite, each conditioned on the ancestors it read.
pub(crate) async fn repair_moved(
    odm: &Odm,
    collection: &str,
    info: TreeInfo,
    ids: &[Bson],
) -> Result<Repaired> {
    let mut out = Repaired::default();
    let projection = doc! { info.parent: 1, info.ancestors: 1 };
    let one = |id: Bson| {
        let options = FindOptions::builder()
            .projection(projection.clone())
            .limit(1)
            .build();
        crate::engine::find_documents(
            odm,
            collection,
            crate::literal::eq("_id", id),
            options,
            None,
        )
    };
    for id in ids {
        let Some(node) = one(id.clone()).await?.into_iter().next() else {
            continue;
        };
        let chain = match node.get(info.parent) {
            None | Some(Bson::Null) => Vec::new(),
            Some(parent) => {
                let Some(p) = one(parent.clone()).await?.into_iter().next() else {
                    continue;
                };
                let mut chain = ids_in(&p, info.ancestors);
                chain.push(parent.clone());
                chain
            }
        };
        if chain.iter().any(|a| IdKey::of(a) == IdKey::of(id)) {
            out.cycles.push(id.clone());
            continue;
        }
        let mut fixes = Vec::new();
        if let Some(f) = fix(info, &node, &chain) {
            fixes.push(f);
        }
        fixes.extend(subtree_fixes(odm, collection, info, id, chain).await?);
        if !fixes.is_empty() {
            out.nodes += super::verify::send_updates(odm, collection, fixes).await?;
        }
    }
    Ok(out)
}

/// The statements rewriting the ancestors of the nodes below `id` (whose ancestors are
/// `chain`) that differ from their parents' chains: the children of each level read by
/// `parent`, a node met twice (a cycle below) read once.
async fn subtree_fixes(
    odm: &Odm,
    collection: &str,
    info: TreeInfo,
    id: &Bson,
    chain: Vec<Bson>,
) -> Result<Vec<Document>> {
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
                if let Some(f) = fix(info, &child, chain) {
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
fn fix(info: TreeInfo, node: &Document, new: &[Bson]) -> Option<Document> {
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
    Some(doc! { "q": q, "u": { "$set": { info.ancestors: new.to_vec() } } })
}
