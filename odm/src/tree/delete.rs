//! Deleting nodes: the tree's delete rule applied to their subtrees.

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::{node, DeleteRule, TreeInfo};
use crate::engine::{Effect, Own};
use crate::model::Model;
use crate::relations::DeleteRestricted;
use crate::{Error, Odm, Result};

/// Where [`Odm::delete_one`] and [`Odm::delete_many`] of a tree's nodes go.
///
/// One `find` reads the ids of the nodes the filter matches (the first one only for
/// `delete_one`), then, by the tree's rule:
///
/// - `restrict` (the default): one `aggregate` counting their children that are not deleted
///   with them; any is [`Error::DeleteRestricted`] and nothing is deleted;
/// - `cascade`: the nodes and every node below them (`{$or: [{_id: {$in: ids}}, {ancestors:
///   {$in: ids}}]}`) are deleted;
/// - `lift`: one `update` pulls the deleted nodes from every descendant's ancestors
///   (`$pullAll`), one `update` gives their children the nearest ancestor left (the last of
///   their ancestors, or `null`), whatever the size of the subtree;
///
/// then the delete: one `delete`, or, when other models reference the tree or keep summaries
/// of it, the delete rules' plan (see [`crate::relations`]). Each command naming the ids is
/// sent once per [chunk](crate::batch) of them. Where the deployment has transactions, all of
/// it is one transaction (retried on write conflicts, then `commitTransaction`); without, in
/// the order above, so that an interruption leaves every remaining node's parent existing
/// ([`Tree::verify`](super::Tree::verify) repairs ancestors left behind).
pub(crate) async fn delete_nodes<T: Model>(
    odm: &Odm,
    info: TreeInfo,
    filter: Document,
    many: bool,
    rules: bool,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let job = Job {
        info,
        filter,
        many,
        rules,
    };
    match session {
        Some(s) => job.run::<T>(odm, Some(s)).await,
        None if node::transactional(odm, crate::transaction::TransactionMode::Auto).await? => {
            crate::transaction::in_transaction(odm, &job, |odm, session, job| {
                Box::pin(job.run::<T>(odm, Some(session)))
            })
            .await
        }
        None => job.run::<T>(odm, None).await,
    }
}

struct Job {
    info: TreeInfo,
    filter: Document,
    many: bool,
    /// Whether other models reference the tree or keep summaries of it.
    rules: bool,
}

impl Job {
    async fn run<T: Model>(
        &self,
        odm: &Odm,
        mut session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let info = self.info;
        let coll = odm.own_database().collection::<Document>(T::COLLECTION);
        let mut options = FindOptions::builder().projection(doc! { "_id": 1 }).build();
        if !self.many {
            options.limit = Some(1);
        }
        let ids: Vec<Bson> = crate::engine::find_documents(
            odm,
            T::COLLECTION,
            self.filter.clone(),
            options,
            session.as_deref_mut(),
        )
        .await?
        .into_iter()
        .filter_map(|mut d| d.remove("_id"))
        .collect();
        if ids.is_empty() {
            return Ok(0);
        }
        let chunks = crate::batch::chunks_within(
            ids.clone(),
            crate::batch::MAX_IDS_BYTES / 2,
            crate::batch::MAX_IDS,
        );
        match info.on_delete {
            DeleteRule::Restrict => {
                let mut count = 0;
                for chunk in &chunks {
                    let mut children = crate::literal::is_in(info.parent, chunk.clone());
                    children.extend(crate::literal::not_in("_id", ids.clone()));
                    let action = coll.count_documents(children);
                    count += crate::engine::send!(action, session.as_deref_mut())
                        .map_err(Odm::driver_error::<T>)?;
                }
                if count > 0 {
                    return Err(Error::DeleteRestricted(DeleteRestricted {
                        collection: T::COLLECTION.to_owned(),
                        referenced_by: T::COLLECTION.to_owned(),
                        path: info.parent.to_owned(),
                        count,
                        chain: Vec::new(),
                        named: DeleteRestricted::named(&ids, &[]),
                    }));
                }
                self.delete::<T>(odm, &chunks, false, session).await
            }
            DeleteRule::Cascade => self.delete::<T>(odm, &chunks, true, session).await,
            DeleteRule::Lift => {
                for chunk in &chunks {
                    // The tree's own fields, kept by the ODM: no writer's version moves.
                    let write = Own::update(
                        T::COLLECTION,
                        crate::literal::is_in(info.ancestors, chunk.clone()),
                        crate::literal::pull_all(info.ancestors, chunk.clone()),
                        Effect::Derived,
                        "tree lift",
                    );
                    odm.write_own(write.of::<T>(), session.as_deref_mut())
                        .await?;
                }
                // The deleted nodes are gone from the ancestors: a child's new parent is the
                // last ancestor it has left.
                let last = format!("${}", info.ancestors);
                let reparent = vec![doc! { "$set": {
                    info.parent: { "$ifNull": [{ "$arrayElemAt": [last.as_str(), -1] }, Bson::Null] },
                } }];
                for chunk in &chunks {
                    let write = Own::update(
                        T::COLLECTION,
                        crate::literal::is_in(info.parent, chunk.clone()),
                        reparent.clone(),
                        Effect::Derived,
                        "tree lift",
                    );
                    odm.write_own(write.of::<T>(), session.as_deref_mut())
                        .await?;
                }
                self.delete::<T>(odm, &chunks, false, session).await
            }
        }
    }

    /// Deletes the nodes (and with `subtrees`, every node below them): one `delete` per chunk,
    /// or the delete rules' plan when other models reference the tree.
    async fn delete<T: Model>(
        &self,
        odm: &Odm,
        chunks: &[Vec<Bson>],
        subtrees: bool,
        mut session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let mut deleted = 0;
        for chunk in chunks {
            let mut filter = crate::literal::is_in("_id", chunk.clone());
            if subtrees {
                filter = doc! { "$or": [
                    filter,
                    crate::literal::is_in(self.info.ancestors, chunk.clone()),
                ] };
            }
            deleted += if self.rules {
                let rules = crate::relations::delete_with_rules(
                    odm,
                    T::COLLECTION,
                    filter,
                    true,
                    session.as_deref_mut(),
                );
                crate::trace::step!("delete_rules", T::COLLECTION, rules).await?
            } else {
                let write = Own::delete(T::COLLECTION, filter, "tree delete").of::<T>();
                odm.write_own(write, session.as_deref_mut()).await?.matched
            };
        }
        Ok(deleted)
    }
}
