//! Moving a node with its subtree: one update of the node, one of all its descendants.

use std::fmt;

use bson::{doc, Bson};
use mongodb::ClientSession;

use super::node;
use super::TreeModel;
use crate::engine::{Effect, Own, Returning};
use crate::transaction::TransactionMode;
use crate::{Error, Odm, Result};

/// What a move found and did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Moved<T: crate::Model> {
    /// The node's parent before the move (`None` for a root).
    pub previous: Option<T::Id>,
    /// Whether anything changed (false when the node already had this parent and these
    /// ancestors).
    pub changed: bool,
    /// How many descendants had their ancestors rewritten.
    pub descendants: u64,
    /// Whether the writes ran in one transaction.
    pub in_transaction: bool,
}

/// Builder returned by [`Tree::move_under`](super::Tree::move_under) and
/// [`Tree::move_to_root`](super::Tree::move_to_root); `.await` it.
///
/// The node's new ancestors are the new parent's followed by the parent (none for a root); every
/// descendant's ancestors keep what follows the node and get the node's new ancestors before
/// it, in one `update` (`multi: true`) of the pipeline form `{$set: {ancestors: {$concatArrays:
/// [new ancestors and the node, {$slice: ["$ancestors", position of the node + 1, ...]}]}}}`
/// over `{ancestors: node}`. The number of commands does not depend on the size of the subtree.
///
/// In a transaction (the default where the deployment has them, [`TransactionMode::Auto`]):
/// one `findAndModify` reading the new parent's ancestors and marking it (a field set, and
/// removed before the commit, so that a concurrent move of the parent's branch conflicts), one
/// `findAndModify` setting the node's parent and ancestors (returning the old ones), the
/// `update` of the descendants, one `update` removing the mark, `commitTransaction`: five
/// commands, three to a root. A write conflict with a concurrent transaction (a move touching
/// the same nodes) aborts it and runs it again after a random pause, until
/// [`Odm::retry_deadline`]; inside the caller's session (`.session(..)`) it is returned
/// instead, and [`Error::is_transient`] is true.
///
/// Without a transaction, in this order: one `find` of the new parent, the `findAndModify` of
/// the node, the `update` of the descendants (three commands, two to a root). An interruption
/// between the last two leaves descendants with the old ancestors, and moves running at the
/// same time may read a parent's ancestors just before another move changes them:
/// [`Tree::verify`](super::Tree::verify) finds and repairs both (the parent chain is the
/// truth).
///
/// For a sharded tree, each `findAndModify` by id (the parent's mark, the node's) is preceded
/// by one `find` of that document's shard key, which the `findAndModify` then names: a sharded
/// cluster before MongoDB 7.1 refuses one without it.
///
/// Moving a node under itself or under one of its descendants is [`Error::TreeCycle`], before
/// anything is written; a missing node or parent is [`Error::NotFound`] (in a transaction,
/// aborted: nothing changed).
#[must_use = "the move runs when awaited"]
pub struct MoveNode<'a, T> {
    odm: &'a Odm,
    node: Result<Bson>,
    parent: Option<Result<Bson>>,
    mode: TransactionMode,
    session: Option<&'a mut ClientSession>,
    _model: std::marker::PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for MoveNode<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MoveNode")
            .field("node", &self.node)
            .field("parent", &self.parent)
            .field("mode", &self.mode)
            .finish()
    }
}

/// The validated ids of one move, which a transaction may run again.
struct Plan<'p> {
    node: &'p Bson,
    parent: Option<&'p Bson>,
}

impl<'a, T: TreeModel> MoveNode<'a, T> {
    pub(crate) fn new(odm: &'a Odm, node: Result<Bson>, parent: Option<Result<Bson>>) -> Self {
        MoveNode {
            odm,
            node,
            parent,
            mode: TransactionMode::Auto,
            session: None,
            _model: std::marker::PhantomData,
        }
    }

    /// Transaction or fixed order (default [`TransactionMode::Auto`]).
    pub fn transaction(mut self, mode: TransactionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Runs inside the caller's session (and its transaction, if one is started).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<Moved<T>> {
        let node = self.node?;
        let parent = self.parent.transpose()?;
        if parent.as_ref() == Some(&node) {
            return Err(cycle::<T>(&node, &node));
        }
        let plan = Plan {
            node: &node,
            parent: parent.as_ref(),
        };
        // A caller's session is taken to hold a transaction (the driver does not tell).
        if let Some(session) = self.session {
            return plan.run::<T>(self.odm, true, Some(session)).await;
        }
        if !node::transactional(self.odm, self.mode).await? {
            return plan.run::<T>(self.odm, false, None).await;
        }
        crate::transaction::in_transaction(self.odm, &plan, |odm, session, plan| {
            Box::pin(plan.run::<T>(odm, true, Some(session)))
        })
        .await
    }
}

fn cycle<T: crate::Model>(node: &Bson, parent: &Bson) -> Error {
    Error::TreeCycle {
        collection: T::COLLECTION.to_owned(),
        node: crate::error::show_id(Some(node)),
        parent: crate::error::show_id(Some(parent)),
    }
}

impl Plan<'_> {
    async fn run<T: TreeModel>(
        &self,
        odm: &Odm,
        mark: bool,
        mut session: Option<&mut ClientSession>,
    ) -> Result<Moved<T>> {
        let info = T::INFO;
        // The new parent as read (marked in a transaction), to remove its mark by its id and
        // shard key once the move is written.
        let mut marked = None;
        let mut ancestors = match self.parent {
            None => Vec::new(),
            Some(parent) => {
                let found = match (mark, session.as_deref_mut()) {
                    (true, Some(s)) => node::mark_one::<T>(odm, info, parent, s).await?,
                    (_, s) => node::read::<T>(odm, info, parent, s).await?,
                };
                let found = found.ok_or_else(|| super::not_found::<T>(parent, "the new parent"))?;
                marked = Some(found.clone());
                if found.ancestors.contains(self.node) {
                    return Err(cycle::<T>(self.node, parent));
                }
                let mut chain = found.ancestors;
                chain.push(parent.clone());
                chain
            }
        };
        let set = doc! { "$set": {
            info.parent: self.parent.cloned().unwrap_or(Bson::Null),
            info.ancestors: ancestors.clone(),
        } };
        let filter =
            crate::engine::by_id_routed::<T>(odm, self.node, session.as_deref_mut()).await?;
        // The node's parent is its writers' to set (a replacement writes it): its version moves.
        let write = Own::update(T::COLLECTION, filter, set, Effect::Owned, "tree move")
            .of::<T>()
            .one()
            .showing(crate::error::show_id(Some(self.node)));
        let returning = Returning::before(node::projection(info));
        let before = odm
            .modify_own(write, returning, session.as_deref_mut())
            .await?
            .ok_or_else(|| super::not_found::<T>(self.node, "the node"))?;
        let before = node::parse::<T>(info, &before)?;
        let previous = before
            .parent
            .clone()
            .map(|p| {
                bson::deserialize_from_bson::<T::Id>(p).map_err(|e| Error::Decode {
                    collection: T::COLLECTION.to_owned(),
                    id: crate::error::show_id(Some(self.node)),
                    path: info.parent.to_owned(),
                    message: e.to_string(),
                })
            })
            .transpose()?;
        let changed = before.parent.as_ref() != self.parent || before.ancestors != ancestors;
        let mut descendants = 0;
        if changed {
            ancestors.push(self.node.clone());
            let shown = format!(
                "the descendants of {}",
                crate::error::show_id(Some(self.node))
            );
            let write = rewrite_prefix(T::COLLECTION, info.ancestors, self.node, ancestors);
            let result = odm
                .write_own(write.of::<T>().showing(shown), session.as_deref_mut())
                .await?
                .modified;
            descendants = result;
        }
        if let (true, Some(parent), Some(s)) = (mark, &marked, session) {
            node::unmark::<T>(odm, &[parent], s).await?;
        }
        Ok(Moved {
            previous,
            changed,
            descendants,
            in_transaction: mark,
        })
    }
}

/// Rewrites the ancestors of every descendant of `node`: what comes before `node` in them
/// becomes `prefix` (which ends with `node`). One `update` with `multi: true`, whatever the
/// number of descendants; ids go through `$literal`, so that an id such as `"$x"` is not read
/// as a field path. The tree's own fields: no writer's version moves.
pub(crate) fn rewrite_prefix<'a>(
    collection: &'a str,
    path: &str,
    node: &Bson,
    prefix: Vec<Bson>,
) -> Own<'a> {
    let field = format!("${path}");
    let after = doc! { "$add": [
        { "$indexOfArray": [field.as_str(), { "$literal": node.clone() }] },
        1,
    ] };
    let pipeline = vec![doc! { "$set": { path: { "$concatArrays": [
        { "$literal": prefix },
        { "$slice": [field.as_str(), after, { "$max": [1, { "$size": field.as_str() }] }] },
    ] } } }];
    let filter = crate::literal::eq(path, node.clone());
    Own::update(collection, filter, pipeline, Effect::Derived, "tree move")
}

impl<'a, T: TreeModel> std::future::IntoFuture for MoveNode<'a, T> {
    type Output = Result<Moved<T>>;
    type IntoFuture = crate::engine::BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("move_under", T::COLLECTION);
        let moved = |m: &Moved<T>| Some(u64::from(m.changed) + m.descendants);
        crate::trace::boxed(span, self.run(), moved)
    }
}
