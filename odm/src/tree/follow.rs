//! A tree kept right after another program moved a node (wrote its `parent` without its
//! `ancestors`, or inserted or replaced it): the node's ancestors and those of its whole
//! subtree rewritten from its parent's chain (see [`crate::follower`]). Reads the present
//! state and writes only what differs, so running it twice changes nothing.

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
/// from the nodes' parents as they are now. A node whose parent is missing, or that does not
/// exist, is left to [`VerifyTree`](super::VerifyTree).
///
/// Commands per node: one `find` of the node, one of its parent, one of its subtree (the nodes
/// listing it among their ancestors), and one `update` command with a statement per node to
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
        let stored = ids_in(&node, info.ancestors);
        if stored != chain {
            fixes.push(fix(info, id, &stored, &chain));
        }
        let options = FindOptions::builder()
            .projection(doc! { info.ancestors: 1 })
            .build();
        let below = crate::engine::find_documents(
            odm,
            collection,
            crate::literal::eq(info.ancestors, id.clone()),
            options,
            None,
        )
        .await?;
        for d in below {
            let Some(child) = d.get("_id") else { continue };
            let old = ids_in(&d, info.ancestors);
            let Some(at) = old.iter().position(|a| IdKey::of(a) == IdKey::of(id)) else {
                continue;
            };
            let mut new = chain.clone();
            new.extend(old[at..].iter().cloned());
            if new != old {
                fixes.push(fix(info, child, &old, &new));
            }
        }
        if !fixes.is_empty() {
            out.nodes += super::verify::send_updates(odm, collection, fixes).await?;
        }
    }
    Ok(out)
}

/// The statement rewriting one node's ancestors from `old` (as read) to `new`.
fn fix(info: TreeInfo, id: &Bson, old: &[Bson], new: &[Bson]) -> Document {
    let mut q = crate::literal::eq("_id", id.clone());
    q.insert(info.ancestors, doc! { "$eq": old.to_vec() });
    doc! { "q": q, "u": { "$set": { info.ancestors: new.to_vec() } } }
}
