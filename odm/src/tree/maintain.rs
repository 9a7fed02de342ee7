//! A tree as a maintainer of the writes of its nodes (see [`crate::pipeline`]).

use bson::RawDocumentBuf;
use mongodb::results::UpdateResult;

use super::delete::delete_nodes;
use super::guard::{guard_replace, refuse_tree_writes, replace_missed};
use super::insert::insert_nodes;
use crate::engine::{
    DeleteCall, InsertCall, Maintainer, ModifyCall, NextDelete, NextInsert, NextModify,
    NextReplace, NextUpdate, ReplaceCall, Step, Stepped, UpdateCall,
};
use crate::Model;

/// A tree's nodes: an insert fills their ancestors from their parents (see [`insert_nodes`]),
/// an update writing `parent` or `ancestors` is refused (a move is [`Tree::move_node`]
/// (super::Tree::move_node)), a replacement keeps the node where it is stored, and a delete
/// applies the tree's rule, with the delete rules after it when the model has any.
pub(crate) struct TreeRule;

impl Maintainer for TreeRule {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        let entry = model.entry;
        entry.tree.is_some()
    }

    fn insert<'a, T: Model>(
        call: InsertCall<'a, T>,
        next: NextInsert<T>,
    ) -> Stepped<'a, InsertCall<'a, T>, usize> {
        match T::entry().tree {
            Some(tree) => Ok(Step::Sent(Box::pin(insert_nodes(call, tree, next)))),
            None => Ok(Step::Pass(call)),
        }
    }

    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        _next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        if let Some(tree) = T::entry().tree {
            refuse_tree_writes(T::COLLECTION, tree, &call.update)?;
        }
        Ok(Step::Pass(call))
    }

    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        _next: NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        if let Some(tree) = T::entry().tree {
            refuse_tree_writes(T::COLLECTION, tree, &call.update)?;
        }
        Ok(Step::Pass(call))
    }

    /// The replacement's parent and ancestors must be the stored ones; when it matched nothing,
    /// a moved node is told from a missing one.
    fn replace<'a, T: Model>(
        mut call: ReplaceCall<'a, T>,
        next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        let Some(tree) = T::entry().tree else {
            return Ok(Step::Pass(call));
        };
        guard_replace(
            T::COLLECTION,
            tree,
            &mut call.filter,
            &call.raw,
            call.upsert,
        )?;
        Ok(Step::Sent(Box::pin(async move {
            let odm = call.odm;
            let given = call.raw.clone();
            let id = call.id.clone();
            let mut session = call.session.take();
            let result = next(call.with_session(session.as_deref_mut())).await?;
            if result.matched_count == 0 {
                replace_missed::<T>(odm, tree, &id, &given, session).await?;
            }
            Ok(result)
        })))
    }

    fn delete<'a, T: Model>(
        call: DeleteCall<'a>,
        _next: NextDelete,
    ) -> Stepped<'a, DeleteCall<'a>, u64> {
        let Some(tree) = T::entry().tree else {
            return Ok(Step::Pass(call));
        };
        let rules = crate::relations::has_rules(call.odm.catalog(), T::COLLECTION);
        let nodes = delete_nodes::<T>(call.odm, tree, call.filter, call.many, rules, call.session);
        Ok(Step::Sent(Box::pin(crate::trace::step!(
            "tree_delete",
            T::COLLECTION,
            nodes
        ))))
    }
}
