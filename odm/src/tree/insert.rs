//! Inserting nodes: `ancestors` taken from the parent, never from the caller.

use std::collections::HashMap;

use bson::{Bson, Document, RawDocumentBuf};
use mongodb::ClientSession;

use super::node::{self, Node};
use super::TreeInfo;
use crate::document::IdKey;
use crate::engine::{InsertCall, NextInsert};
use crate::model::Model;
use crate::transaction::TransactionMode;
use crate::{Error, Odm, Result};

/// Where [`Odm::insert_one`] and [`Odm::insert_many`] of a tree's nodes go.
///
/// Each document's `ancestors` is rewritten to its parent's ancestors followed by the parent
/// (`[]` for a root), whatever the caller put there. A parent inserted in the same call, before
/// or after its children, is resolved from the call itself; the others are read:
///
/// - where the deployment has transactions (or inside the caller's transaction): one
///   `findAndModify` marking the parent and reading its ancestors (for several parents, one
///   `update` marking them and one `find`), the `insert`, one `update` removing the mark, and
///   `commitTransaction`: a move of the parent's branch at the same time conflicts with the
///   insert (one of the two runs again), so the new node never keeps the parent's old
///   ancestors;
/// - without transactions: one `find` of the parents projecting `parent` and `ancestors`, then
///   the `insert`. A move of the parent's branch between the two leaves the new node with the
///   old ancestors: [`Tree::verify`](super::Tree::verify) finds and repairs it.
///
/// A batch whose every parent is in the batch (a whole tree, roots included) reads nothing: one
/// `insert`. A missing parent is [`Error::NotFound`] and nothing is inserted; a node listed as
/// its own ancestor (through parents in the batch) is [`Error::TreeCycle`].
pub(crate) async fn insert_nodes<T: Model>(
    call: InsertCall<'_, T>,
    info: TreeInfo,
    next: NextInsert<T>,
) -> Result<usize> {
    let InsertCall {
        odm,
        docs: typed,
        raws,
        ordered,
        session,
        extras,
    } = call;
    let docs: Vec<Document> = raws
        .iter()
        .map(|r| {
            Document::try_from(r.as_ref()).map_err(|e| Error::Encode {
                collection: T::COLLECTION.to_owned(),
                what: "document".to_owned(),
                message: e.to_string(),
            })
        })
        .collect::<Result<_>>()?;
    let batch: HashMap<IdKey, usize> = docs
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((IdKey::of(d.get("_id")?), i)))
        .collect();
    let parent = |d: &Document| match d.get(info.parent) {
        None | Some(Bson::Null) => None,
        Some(p) => Some(p.clone()),
    };
    let mut outside: Vec<Bson> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in &docs {
        if let Some(p) = parent(d) {
            let key = IdKey::of(&p);
            if !batch.contains_key(&key) && seen.insert(key) {
                outside.push(p);
            }
        }
    }
    let job = Job {
        info,
        docs,
        batch,
        outside,
        ordered,
        extras,
        typed,
        next,
    };
    match session {
        // A caller's session is taken to hold a transaction (the driver does not tell).
        Some(s) => job.run(odm, true, Some(s)).await,
        None if job.outside.is_empty() => job.run(odm, false, None).await,
        None if node::transactional(odm, TransactionMode::Auto).await? => {
            crate::transaction::in_transaction(odm, &job, |odm, session, job| {
                Box::pin(job.run(odm, true, Some(session)))
            })
            .await
        }
        None => job.run(odm, false, None).await,
    }
}

/// One insert of nodes, which a transaction may run again.
struct Job<'d, T> {
    info: TreeInfo,
    docs: Vec<Document>,
    /// The position of each document in `docs`, by id.
    batch: HashMap<IdKey, usize>,
    /// The parents that are not in the batch.
    outside: Vec<Bson>,
    ordered: bool,
    /// What the caller's own command carries besides its concern.
    extras: Option<Box<crate::engine::Extras>>,
    /// The typed documents, for the maintainers after the tree.
    typed: &'d [&'d T],
    /// The maintainers after the tree, then the plain insert.
    next: NextInsert<T>,
}

impl<T: Model> Job<'_, T> {
    async fn run(
        &self,
        odm: &Odm,
        mark: bool,
        mut session: Option<&mut ClientSession>,
    ) -> Result<usize> {
        let info = self.info;
        let known = if self.outside.is_empty() {
            HashMap::new()
        } else {
            node::read_many::<T>(odm, info, &self.outside, mark, session.as_deref_mut()).await?
        };
        if let Some(missing) = self
            .outside
            .iter()
            .find(|p| !known.contains_key(&IdKey::of(p)))
        {
            return Err(super::not_found::<T>(missing, "the parent"));
        }
        // Each document's ancestors, resolved through the batch first, then the stored parents.
        let mut resolved: Vec<Option<Vec<Bson>>> = vec![None; self.docs.len()];
        for start in 0..self.docs.len() {
            if resolved[start].is_some() {
                continue;
            }
            let mut path = Vec::new();
            let mut at = start;
            let base = loop {
                if let Some(done) = &resolved[at] {
                    // A parent resolved earlier: its ancestors, then itself.
                    let mut chain = done.clone();
                    chain.extend(self.docs[at].get("_id").cloned());
                    break chain;
                }
                if path.contains(&at) {
                    let id = self.docs[at].get("_id").cloned().unwrap_or(Bson::Null);
                    return Err(Error::TreeCycle {
                        collection: T::COLLECTION.to_owned(),
                        node: crate::error::show_id(Some(&id)),
                        parent: crate::error::show_id(self.docs[at].get(info.parent)),
                    });
                }
                path.push(at);
                match self.docs[at].get(info.parent) {
                    None | Some(Bson::Null) => break Vec::new(),
                    Some(p) => match self.batch.get(&IdKey::of(p)) {
                        Some(&i) => at = i,
                        None => {
                            let Node { ancestors, .. } = &known[&IdKey::of(p)];
                            let mut chain = ancestors.clone();
                            chain.push(p.clone());
                            break chain;
                        }
                    },
                }
            };
            // Down the path found, from the node nearest the known base.
            let mut chain = base;
            for &i in path.iter().rev() {
                resolved[i] = Some(chain.clone());
                if let Some(id) = self.docs[i].get("_id") {
                    chain.push(id.clone());
                }
            }
        }
        let raws = self
            .docs
            .iter()
            .zip(resolved)
            .map(|(d, ancestors)| {
                let mut d = d.clone();
                d.insert(info.ancestors, ancestors.unwrap_or_default());
                RawDocumentBuf::try_from(&d).map_err(|e| Error::Encode {
                    collection: T::COLLECTION.to_owned(),
                    what: "document".to_owned(),
                    message: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let n = (self.next)(InsertCall {
            odm,
            docs: self.typed,
            raws,
            ordered: self.ordered,
            session: session.as_deref_mut(),
            extras: self.extras.clone(),
        })
        .await?;
        if let (true, Some(s)) = (mark && !self.outside.is_empty(), session) {
            let read: Vec<&node::Node> = self
                .outside
                .iter()
                .filter_map(|p| known.get(&IdKey::of(p)))
                .collect();
            node::unmark::<T>(odm, &read, s).await?;
        }
        Ok(n)
    }
}
