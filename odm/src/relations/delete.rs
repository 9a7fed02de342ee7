//! Deleting with the delete rules of every referencing field.
//!
//! A delete runs in two passes. The plan reads: the ids to delete, then, field by field, the
//! documents each rule touches (following cascades), refusing the whole delete if a
//! `restrict` rule finds a reference. The execution writes: pulls and nullifies first, then
//! the deletes, children before parents. With a session (the caller's, or one the ODM opens
//! when the deployment has transactions) everything is one transaction; without, the order
//! above means an interruption can leave references removed, never dangling.

use std::collections::BTreeMap;
use std::fmt;

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::{references_to, OnDelete, RefKind};
use crate::populate::IdKey;
use crate::{Error, Odm, Result};

/// A delete refused by a `restrict` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteRestricted {
    /// The collection the delete was on.
    pub collection: String,
    /// The referencing collection.
    pub referenced_by: String,
    /// The referencing field.
    pub path: String,
    /// How many documents reference the ones being deleted.
    pub count: u64,
}

impl fmt::Display for DeleteRestricted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot delete from `{}`: {} document(s) in `{}` reference them through `{}` (on_delete = \"restrict\")",
            self.collection, self.count, self.referenced_by, self.path
        )
    }
}

/// Cascades deeper than this are refused (a cycle of cascade rules, most likely).
const MAX_DEPTH: usize = 16;

#[derive(Default)]
struct Plan {
    /// Ids to delete per collection, in the order they were reached (parents first).
    deletes: Vec<(String, Vec<Bson>)>,
    /// `(collection, filter, update)` for pull and nullify rules.
    updates: Vec<(String, Document, Document)>,
    /// `(collection, filter)` for cascades into collections nothing references: deleted by
    /// filter, without reading their ids (a host's squillions of log messages).
    filter_deletes: Vec<(String, Document)>,
    seen: BTreeMap<String, std::collections::HashSet<IdKey>>,
    /// Latest-N arrays to recompute once the deletes are done, with the parents concerned.
    latest: Vec<(crate::denormalize::CopyInfo, Vec<Bson>)>,
    /// `restrict` checks, made once the plan is complete so that documents the plan deletes
    /// anyway do not count: (collection deleted from, holder collection, path, filter).
    checks: Vec<(String, String, String, Document)>,
}

impl Plan {
    /// Refuses the delete if a `restrict` check finds a holder the plan does not delete.
    /// One `aggregate` (a count) per check.
    async fn check(&self, odm: &Odm, mut session: Option<&mut ClientSession>) -> Result<()> {
        for (collection, holder, path, filter) in &self.checks {
            let mut all = vec![Bson::Document(filter.clone())];
            let deleted: Vec<Bson> = self
                .deletes
                .iter()
                .filter(|(c, _)| c == holder)
                .flat_map(|(_, ids)| ids.iter().cloned())
                .collect();
            if !deleted.is_empty() {
                all.push(Bson::Document(crate::literal::not_in("_id", deleted)));
            }
            let by_filter: Vec<Bson> = self
                .filter_deletes
                .iter()
                .filter(|(c, _)| c == holder)
                .map(|(_, f)| Bson::Document(f.clone()))
                .collect();
            if !by_filter.is_empty() {
                all.push(Bson::Document(doc! { "$nor": by_filter }));
            }
            let filter = if all.len() == 1 {
                filter.clone()
            } else {
                doc! { "$and": all }
            };
            let n = count(odm, holder, filter, session.as_deref_mut()).await?;
            if n > 0 {
                return Err(Error::DeleteRestricted(DeleteRestricted {
                    collection: collection.clone(),
                    referenced_by: holder.clone(),
                    path: path.clone(),
                    count: n,
                }));
            }
        }
        Ok(())
    }
}

async fn find_ids(
    odm: &Odm,
    collection: &str,
    filter: Document,
    limit_one: bool,
    session: Option<&mut ClientSession>,
) -> Result<Vec<Bson>> {
    let options = FindOptions::builder()
        .projection(doc! { "_id": 1 })
        .limit(limit_one.then_some(1))
        .build();
    let docs = crate::ops::find_documents(odm, collection, filter, options, session).await?;
    Ok(docs
        .into_iter()
        .filter_map(|mut d| d.remove("_id"))
        .collect())
}

async fn count(
    odm: &Odm,
    collection: &str,
    filter: Document,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let coll = odm.database().collection::<Document>(collection);
    let action = coll.count_documents(filter);
    match session {
        None => action.await,
        Some(s) => action.session(s).await,
    }
    .map_err(|e| Error::from_driver(collection, e))
}

fn plan_level<'a>(
    odm: &'a Odm,
    plan: &'a mut Plan,
    collection: String,
    ids: Vec<Bson>,
    depth: usize,
    mut session: Option<&'a mut ClientSession>,
) -> crate::populate::BoxFuture<'a, Result<()>> {
    Box::pin(async move {
        if depth > MAX_DEPTH {
            return Err(Error::Unsupported(format!(
                "delete cascades more than {MAX_DEPTH} levels deep from `{collection}`: check the cascade rules for a cycle"
            )));
        }
        let seen = plan.seen.entry(collection.clone()).or_default();
        let ids: Vec<Bson> = ids
            .into_iter()
            .filter(|id| seen.insert(IdKey::of(id)))
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        plan.deletes.push((collection.clone(), ids.clone()));
        // Summaries of the deleted documents go with them (`parts: [{id, name}]`).
        for copy in crate::denormalize::copies_from(&collection) {
            match &copy.kind {
                crate::denormalize::CopyKind::Summary {
                    array: true, id, ..
                } => {
                    plan.updates.push((
                        copy.dependent.to_owned(),
                        copy.dependents_of(&ids),
                        doc! { "$pull": { copy.path.as_str(): crate::literal::is_in(id, ids.clone()) } },
                    ));
                }
                // A single summary: cleared when it may be absent, else the delete is refused
                // (a required summary of a document that no longer exists cannot be kept).
                crate::denormalize::CopyKind::Summary {
                    array: false,
                    id,
                    optional,
                } => {
                    let filter = copy.dependents_of(&ids);
                    if *optional {
                        plan.updates.push((
                            copy.dependent.to_owned(),
                            filter,
                            doc! { "$set": { copy.path.as_str(): Bson::Null } },
                        ));
                    } else {
                        plan.checks.push((
                            collection.clone(),
                            copy.dependent.to_owned(),
                            format!("{}.{id}", copy.path),
                            filter,
                        ));
                    }
                }
                // A parent's latest-N array loses the deleted ones and takes the next latest.
                crate::denormalize::CopyKind::Latest { .. } => {
                    let parents = crate::denormalize::parents_of(
                        odm,
                        &collection,
                        crate::literal::is_in("_id", ids.clone()),
                        std::slice::from_ref(&copy),
                        session.as_deref_mut(),
                    )
                    .await?;
                    let parents = parents.into_iter().next().unwrap_or_default();
                    if !parents.is_empty() {
                        plan.latest.push((copy, parents));
                    }
                }
                _ => {}
            }
        }
        for r in references_to(&collection) {
            let filter = crate::literal::is_in(&r.path, ids.clone());
            match r.on_delete {
                OnDelete::Restrict => {
                    plan.checks.push((
                        collection.clone(),
                        r.from.to_owned(),
                        r.path.clone(),
                        filter,
                    ));
                }
                // A collection nothing references, and whose documents nothing copies (but
                // the latest-N array of the parent being deleted), is deleted by filter,
                // without reading its ids: a host's squillions of log messages.
                OnDelete::Cascade
                    if references_to(r.from).is_empty()
                        && crate::denormalize::copies_from(r.from).iter().all(|c| {
                            matches!(&c.kind, crate::denormalize::CopyKind::Latest { via, .. }
                                if *via == r.path && c.dependent == collection)
                        }) =>
                {
                    plan.filter_deletes.push((r.from.to_owned(), filter));
                }
                OnDelete::Cascade => {
                    let children =
                        find_ids(odm, r.from, filter, false, session.as_deref_mut()).await?;
                    plan_level(
                        odm,
                        plan,
                        r.from.to_owned(),
                        children,
                        depth + 1,
                        session.as_deref_mut(),
                    )
                    .await?;
                }
                OnDelete::Pull => {
                    let update = crate::literal::pull_all(&r.path, ids.clone());
                    plan.updates.push((r.from.to_owned(), filter, update));
                }
                OnDelete::Nullify => {
                    let update = match r.kind {
                        RefKind::Many => crate::literal::pull_all(&r.path, ids.clone()),
                        _ => {
                            let mut update = doc! { "$set": { r.path.as_str(): Bson::Null } };
                            // Copies taken through this reference describe a document that is
                            // gone: clear them with it.
                            let cleared: Document = crate::denormalize::copies_into(r.from)
                                .iter()
                                .filter(|c| matches!(&c.kind, crate::denormalize::CopyKind::Flat { via } if *via == r.path))
                                .map(|c| (c.path.clone(), Bson::String(String::new())))
                                .collect();
                            if !cleared.is_empty() {
                                update.insert("$unset", cleared);
                            }
                            update
                        }
                    };
                    plan.updates.push((r.from.to_owned(), filter, update));
                }
            }
        }
        Ok(())
    })
}

async fn execute(odm: &Odm, plan: Plan, mut session: Option<&mut ClientSession>) -> Result<u64> {
    for (collection, filter, update) in plan.updates {
        let coll = odm.database().collection::<Document>(&collection);
        let action = coll.update_many(filter, update);
        match session.as_deref_mut() {
            None => action.await,
            Some(s) => action.session(s).await,
        }
        .map_err(|e| Error::from_driver(&collection, e))?;
    }
    for (collection, filter) in plan.filter_deletes {
        let coll = odm.database().collection::<Document>(&collection);
        let action = coll.delete_many(filter);
        match session.as_deref_mut() {
            None => action.await,
            Some(s) => action.session(s).await,
        }
        .map_err(|e| Error::from_driver(&collection, e))?;
    }
    let mut root_deleted = 0;
    // Children (reached later) are deleted before their parents; the first entry is the root.
    for (i, (collection, ids)) in plan.deletes.into_iter().enumerate().rev() {
        let coll = odm.database().collection::<Document>(&collection);
        let action = coll.delete_many(crate::literal::is_in("_id", ids));
        let result = match session.as_deref_mut() {
            None => action.await,
            Some(s) => action.session(s).await,
        }
        .map_err(|e| Error::from_driver(&collection, e))?;
        if i == 0 {
            root_deleted = result.deleted_count;
        }
    }
    for (copy, parents) in plan.latest {
        crate::denormalize::refresh_latest(odm, &copy, parents, session.as_deref_mut()).await?;
    }
    Ok(root_deleted)
}

/// Deletes what `filter` matches in `collection` (one document unless `many`), applying the
/// delete rules of every registered reference into it. Returns the number of documents deleted
/// from `collection` itself.
///
/// Commands: one `find` for the ids (a model nothing references is deleted with one `delete`,
/// without any of this), then per referencing field one `aggregate` (restrict: a count) or,
/// for a cascade into a collection that is itself referenced, one `find` of the children's
/// ids (recursively); then one `update` per pull/nullify field, one `delete` by filter per
/// cascade into an unreferenced collection, and one `delete` per other collection; for sources
/// of latest-N arrays, one `find` of their parents before and, after the deletes, one
/// `aggregate` recomputing those parents' arrays and one `update` per parent; plus
/// `hello` once per `Odm` and the transaction's `commitTransaction` when the ODM opened one.
pub(crate) async fn delete_with_rules(
    odm: &Odm,
    collection: &str,
    filter: Document,
    many: bool,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    match session {
        Some(s) => delete_in(odm, collection, filter, many, Some(s)).await,
        None if odm.supports_transactions().await? => {
            crate::retry::in_transaction(
                odm,
                &(collection, filter, many),
                |odm, s, (collection, filter, many)| {
                    Box::pin(delete_in(odm, collection, filter.clone(), *many, Some(s)))
                },
            )
            .await
        }
        None => delete_in(odm, collection, filter, many, None).await,
    }
}

async fn delete_in(
    odm: &Odm,
    collection: &str,
    filter: Document,
    many: bool,
    mut session: Option<&mut ClientSession>,
) -> Result<u64> {
    let ids = find_ids(odm, collection, filter, !many, session.as_deref_mut()).await?;
    if ids.is_empty() {
        return Ok(0);
    }
    let mut plan = Plan::default();
    plan_level(
        odm,
        &mut plan,
        collection.to_owned(),
        ids,
        0,
        session.as_deref_mut(),
    )
    .await?;
    plan.check(odm, session.as_deref_mut()).await?;
    execute(odm, plan, session).await
}
