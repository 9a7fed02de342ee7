//! Trees of documents: the seed's subjects, each naming its `parent` and listing its
//! `ancestors` root first (`{_id: "Jazz Age", parent: "1920s", ancestors: ["American
//! Literature", "1920s"]}`).
//!
//! A model declared `#[odm(tree)]` gets both fields kept by the ODM and indexed (`parent_1`,
//! and the multikey `ancestors_1`): inserts fill `ancestors` from the parent, whatever the
//! caller put there; [`Tree::move_under`] re-roots a whole subtree with one `update` of its
//! descendants, whatever their number; deletes apply the declared [`DeleteRule`]; typed updates
//! of the two fields do not compile and raw ones are refused ([`Error::TreeWrite`]). The queries
//! the pattern exists for are one command each: children, descendants (`{ancestors: id}`),
//! roots, the ancestor chain in order, the depth.
//!
//! Where the deployment has transactions, an insert under a parent and a move each run in one
//! (retried on write conflicts, like every transaction the ODM opens), which marks the parent
//! (a field written and removed again in the same transaction): a move of the parent's branch
//! that runs at the same time then conflicts with it instead of leaving the new node with the
//! parent's old ancestors. Without transactions the writes go in a fixed, documented order, and
//! [`Tree::verify`] finds (and with `.repair(true)` fixes) what an interruption or concurrent
//! moves left behind.

mod delete;
mod follow;
mod follows;
mod guard;
mod insert;
mod maintain;
mod moves;
mod node;
mod verify;

use std::marker::PhantomData;

use bson::{doc, Bson, Document, RawDocumentBuf};
use futures_util::TryStreamExt;

use crate::model::Model;
use crate::path::Value;
use crate::{Error, Odm, Result};

pub(crate) use follow::{after_deleted, repair_moved, Malformed};
pub(crate) use follows::TreeFollow;
pub(crate) use maintain::TreeRule;
pub use moves::{MoveNode, Moved};
pub(crate) use verify::sweep;
pub use verify::{TreeIssue, TreeReport, VerifyTree};

pub use crate::catalog::{DeleteRule, TreeInfo};

/// A model stored as a tree (`#[odm(tree)]`); the derive implements it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tree",
    label = "this model has no `#[odm(tree)]`",
    note = "declare `#[odm(tree)]` on the model, with the fields `parent: Option<Ref<Self>>` and `ancestors: Vec<Ref<Self>>`"
)]
pub trait TreeModel: Model {
    /// Its parent and ancestors fields and its delete rule.
    const INFO: TreeInfo;
}

impl Odm {
    /// The tree operations of `T` (a model declared `#[odm(tree)]`). Sends nothing.
    pub fn tree<T: TreeModel>(&self) -> Tree<'_, T> {
        Tree {
            odm: self,
            _model: PhantomData,
        }
    }
}

/// The tree operations of one model, from [`Odm::tree`]. Cheap to copy.
#[derive(Debug)]
pub struct Tree<'a, T> {
    pub(crate) odm: &'a Odm,
    _model: PhantomData<fn() -> T>,
}

impl<T> Clone for Tree<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Tree<'_, T> {}

/// Encodes an id given by the caller, for a filter or for a write (its keys checked like those
/// of any written document).
pub(crate) fn encode_id<T: Model>(what: &str, id: &impl Value<T::Id>) -> Result<Bson> {
    let id = id.to_bson().map_err(|e| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: what.to_owned(),
        message: e.to_string(),
    })?;
    crate::key_check::check_value(T::COLLECTION, what, &id)?;
    Ok(id)
}

impl<'a, T: TreeModel> Tree<'a, T> {
    /// The ancestors of `id`, root first, ending with its parent (empty for a root): one
    /// `aggregate`, `$match` on the node and `$lookup` of its `ancestors` by `_id`.
    ///
    /// [`Error::NotFound`] when there is no such node; [`Error::DanglingReference`] when an
    /// ancestor it lists does not exist ([`Tree::verify`] repairs that).
    pub async fn ancestors(&self, id: impl Value<T::Id>) -> Result<Vec<T>> {
        let id = encode_id::<T>("node id", &id)?;
        let info = T::INFO;
        let pipeline = vec![
            doc! { "$match": crate::literal::eq("_id", id.clone()) },
            doc! { "$project": { info.ancestors: 1 } },
            doc! { "$lookup": {
                "from": T::COLLECTION,
                "localField": info.ancestors,
                "foreignField": "_id",
                "as": node::CHAIN,
            } },
        ];
        let found: Vec<Document> = self
            .odm
            .database()
            .collection::<Document>(T::COLLECTION)
            .aggregate(pipeline)
            .await
            .map_err(Odm::driver_error::<T>)?
            .try_collect()
            .await
            .map_err(Odm::driver_error::<T>)?;
        let Some(mut node) = found.into_iter().next() else {
            return Err(not_found::<T>(&id, "the node"));
        };
        let listed = node::ancestors_of::<T>(info, &node)?;
        let chain = match node.remove(node::CHAIN) {
            Some(Bson::Array(docs)) => docs,
            _ => Vec::new(),
        };
        let mut by_id: std::collections::HashMap<_, Document> = chain
            .into_iter()
            .filter_map(|d| match d {
                Bson::Document(d) => Some(d),
                _ => None,
            })
            .filter_map(|d| Some((crate::document::IdKey::of(d.get("_id")?), d)))
            .collect();
        let from = crate::decode::Reading::of::<T>(self.odm);
        let mut out = Vec::with_capacity(listed.len());
        for ancestor in &listed {
            let Some(doc) = by_id.remove(&crate::document::IdKey::of(ancestor)) else {
                return Err(Error::DanglingReference {
                    collection: T::COLLECTION.to_owned(),
                    id: crate::error::show_id(Some(&id)),
                    path: info.ancestors.to_owned(),
                    target: T::COLLECTION.to_owned(),
                    missing: crate::error::show_id(Some(ancestor)),
                });
            };
            let raw = RawDocumentBuf::try_from(&doc).map_err(|e| Error::Decode {
                collection: T::COLLECTION.to_owned(),
                id: crate::error::show_id(doc.get("_id")),
                path: ".".to_owned(),
                message: e.to_string(),
            })?;
            out.push(crate::decode::decode::<T>(&from, &raw)?);
        }
        Ok(out)
    }

    /// How many ancestors `id` has (0 for a root): one `find` projecting `ancestors`.
    /// [`Error::NotFound`] when there is no such node.
    pub async fn depth(&self, id: impl Value<T::Id>) -> Result<usize> {
        let id = encode_id::<T>("node id", &id)?;
        let node = node::read::<T>(self.odm, T::INFO, &id, None).await?;
        Ok(node
            .ok_or_else(|| not_found::<T>(&id, "the node"))?
            .ancestors
            .len())
    }

    /// Moves `node`, with its whole subtree, under `parent`. See [`MoveNode`] for the commands
    /// (a fixed number, whatever the size of the subtree).
    pub fn move_under(
        &self,
        node: impl Value<T::Id>,
        parent: impl Value<T::Id>,
    ) -> MoveNode<'a, T> {
        MoveNode::new(
            self.odm,
            encode_id::<T>("node id", &node),
            Some(encode_id::<T>("parent id", &parent)),
        )
    }

    /// Makes `node` a root, with its whole subtree. See [`MoveNode`].
    pub fn move_to_root(&self, node: impl Value<T::Id>) -> MoveNode<'a, T> {
        MoveNode::new(self.odm, encode_id::<T>("node id", &node), None)
    }

    /// Checks every node's `ancestors` against its parent chain, and with `.repair(true)`
    /// rewrites those that disagree. See [`VerifyTree`].
    pub fn verify(&self) -> VerifyTree<'a, T> {
        VerifyTree::new(self.odm)
    }
}

/// [`Error::NotFound`] for a node of `T`.
pub(crate) fn not_found<T: Model>(id: &Bson, what: &str) -> Error {
    Error::NotFound {
        collection: T::COLLECTION.to_owned(),
        what: format!("{what} {}", crate::error::show_id(Some(id))),
    }
}
