//! The plan of a delete: the ids to delete, level after level of cascades, and what each
//! rule will write, read before anything is written.

use std::collections::BTreeMap;

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::{OnDelete, RefKind};
use crate::document::IdKey;
use crate::{Error, Odm, Result};

use super::holders::{Change, Matching};
use super::DeleteRestricted;

/// Cascades deeper than this are refused (a cycle of cascade rules, most likely).
pub(super) const MAX_DEPTH: usize = 16;

#[derive(Default)]
pub(super) struct Plan {
    /// Ids to delete per collection, in the order they were reached (parents first).
    pub(super) deletes: Vec<(String, Vec<Bson>)>,
    /// For each entry of `deletes`, the documents as read with their ids, holding their shard
    /// key's values (empty for a collection without a key to carry): the delete names them, so
    /// that it is routed (see [`crate::catalog::KeyCarrier`]).
    pub(super) keyed: Vec<Vec<Document>>,
    /// The documents pull and nullify rules update, and how.
    pub(super) updates: Vec<(Matching, Change)>,
    /// Which of `updates` take out summaries copied from the deleted documents: sent once,
    /// when the delete is visible to other writers (see `execute::Resend`).
    pub(super) summaries: Vec<usize>,
    /// Cascades into collections nothing references: deleted by filter, without reading their
    /// ids (a host's squillions of log messages).
    pub(super) filter_deletes: Vec<Matching>,
    pub(super) seen: BTreeMap<String, std::collections::HashSet<IdKey>>,
    /// Latest-N arrays to recompute once the deletes are done, with the parents concerned.
    pub(super) latest: Vec<(crate::catalog::CopyInfo, Vec<Bson>)>,
    /// `restrict` checks, made once the plan is complete so that documents the plan deletes
    /// anyway do not count: (collection deleted from, path, holders, cascade chain).
    pub(super) checks: Vec<(String, String, Matching, Vec<String>)>,
}

/// The ids a plan may name and still run in one transaction the ODM opens: the size of one
/// command. A larger delete is too much for one transaction (MongoDB's storage engine cache,
/// its 60-second transaction lifetime) and runs in batches without one instead.
pub(super) const MAX_TRANSACTION_ID_BYTES: usize = crate::batch::MAX_COMMAND_BYTES;

impl Plan {
    /// The plan, unless it names more ids than one transaction should hold: then an error that
    /// [`is_too_large`](crate::transaction::is_too_large) recognises, so that the delete falls
    /// back to batches.
    pub(super) fn fits_one_transaction(self) -> Result<Plan> {
        let lists = self
            .deletes
            .iter()
            .map(|(_, ids)| ids)
            .chain(self.updates.iter().map(|(m, _)| &m.ids))
            .chain(self.filter_deletes.iter().map(|m| &m.ids));
        let mut bytes = 0;
        for ids in lists {
            bytes += ids
                .iter()
                .map(|id| crate::batch::element_size(0, id))
                .sum::<usize>();
            if bytes > MAX_TRANSACTION_ID_BYTES {
                return Err(Error::Unsupported(format!(
                    "this delete names more than {MAX_TRANSACTION_ID_BYTES} bytes of ids: too large for one transaction"
                )));
            }
        }
        Ok(self)
    }

    /// Refuses the delete if a `restrict` check finds a holder the plan does not delete (see
    /// [`violations`](Self::violations), stopping at the first).
    pub(super) async fn check(&self, odm: &Odm, session: Option<&mut ClientSession>) -> Result<()> {
        match self
            .violations(odm, session, true)
            .await?
            .into_iter()
            .next()
        {
            Some(v) => Err(Error::DeleteRestricted(v)),
            None => Ok(()),
        }
    }

    /// The `restrict` checks that find holders the plan does not delete (only the first when
    /// `first_only`). One `aggregate` (a count) per check; when the check's filter would pass
    /// the [id budget](crate::batch) of one command, one `find` of the holders' ids per chunk
    /// instead, the ones the plan deletes taken out here.
    pub(super) async fn violations(
        &self,
        odm: &Odm,
        mut session: Option<&mut ClientSession>,
        first_only: bool,
    ) -> Result<Vec<DeleteRestricted>> {
        let mut found = Vec::new();
        for (collection, path, holders, chain) in &self.checks {
            let holder = &holders.collection;
            let filter = holders.filter(holders.ids.clone());
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
            let by_filter: Vec<&Matching> = self
                .filter_deletes
                .iter()
                .filter(|m| m.collection == *holder)
                .collect();
            if !by_filter.is_empty() {
                let nor: Vec<Bson> = by_filter
                    .iter()
                    .map(|m| Bson::Document(m.filter(m.ids.clone())))
                    .collect();
                all.push(Bson::Document(doc! { "$nor": nor }));
            }
            let filter = if all.len() == 1 {
                filter
            } else {
                doc! { "$and": all }
            };
            let fits = bson::serialize_to_vec(&filter)
                .is_ok_and(|v| v.len() <= crate::batch::MAX_IDS_BYTES);
            let (n, listed) = if fits {
                let n = count(odm, holder, filter.clone(), session.as_deref_mut()).await?;
                // Holders left as they are are named (a refused delete counts them only).
                let listed = if n > 0 && !first_only {
                    list(odm, holder, filter, session.as_deref_mut()).await?
                } else {
                    Vec::new()
                };
                (n, listed)
            } else {
                let (n, listed) = self
                    .count_left(odm, holders, &by_filter, session.as_deref_mut())
                    .await?;
                (n, if first_only { Vec::new() } else { listed })
            };
            if n > 0 {
                found.push(DeleteRestricted {
                    collection: collection.clone(),
                    referenced_by: holder.clone(),
                    path: path.clone(),
                    count: n,
                    chain: chain.clone(),
                    named: DeleteRestricted::named(&holders.ids, &listed),
                });
                if first_only {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// The holders a check finds that the plan does not delete, counted here, with the first
    /// [`DeleteRestricted::LISTED`] of their ids: one `find` per chunk of the check's ids,
    /// projecting `_id` and the references of the by-filter deletes.
    pub(super) async fn count_left(
        &self,
        odm: &Odm,
        holders: &Matching,
        by_filter: &[&Matching],
        mut session: Option<&mut ClientSession>,
    ) -> Result<(u64, Vec<Bson>)> {
        let deleted = self.seen.get(&holders.collection);
        let gone: Vec<(&Matching, std::collections::HashSet<IdKey>)> = by_filter
            .iter()
            .map(|m| (*m, m.ids.iter().map(IdKey::of).collect()))
            .collect();
        let mut projection = doc! { "_id": 1 };
        for (m, _) in &gone {
            projection.insert(m.key.as_str(), 1);
            if let Some(k) = m.kind {
                projection.insert(k.field, 1);
            }
        }
        let mut left = std::collections::HashSet::new();
        let mut listed = Vec::new();
        for chunk in holders.chunks(&holders.ids, crate::batch::MAX_IDS_BYTES) {
            let options = FindOptions::builder()
                .projection(projection.clone())
                .build();
            let found = crate::engine::find_documents(
                odm,
                &holders.collection,
                holders.filter(chunk),
                options,
                session.as_deref_mut(),
            )
            .await?;
            for d in found {
                let Some(id) = d.get("_id").map(IdKey::of) else {
                    continue;
                };
                if deleted.is_some_and(|s| s.contains(&id)) {
                    continue;
                }
                let by_rule = gone.iter().any(|(m, ids)| m.holds(&d, ids));
                if !by_rule && left.insert(id) && listed.len() < DeleteRestricted::LISTED {
                    listed.extend(d.get("_id").cloned());
                }
            }
        }
        Ok((left.len() as u64, listed))
    }
}

/// The ids of the documents `filter` matches and, when `collection` has a shard key to carry,
/// the documents read (the id and the key's fields): one `find`.
pub(super) async fn find_keyed(
    odm: &Odm,
    collection: &str,
    filter: Document,
    limit_one: bool,
    session: Option<&mut ClientSession>,
) -> Result<(Vec<Bson>, Vec<Document>)> {
    let key = crate::catalog::KeyCarrier::of(odm.catalog(), collection);
    let mut projection = doc! { "_id": 1 };
    key.project(&mut projection);
    let options = FindOptions::builder()
        .projection(projection)
        .limit(limit_one.then_some(1))
        .build();
    let docs = crate::engine::find_documents(odm, collection, filter, options, session).await?;
    let ids = docs.iter().filter_map(|d| d.get("_id").cloned()).collect();
    Ok((ids, if key.is_empty() { Vec::new() } else { docs }))
}

pub(super) async fn count(
    odm: &Odm,
    collection: &str,
    filter: Document,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let coll = odm.own_database().collection::<Document>(collection);
    let action = coll.count_documents(filter);
    crate::engine::send!(action, session).map_err(|e| Error::from_driver(collection, e))
}

/// The ids of the first [`DeleteRestricted::LISTED`] documents `filter` matches in
/// `collection`: one `find` (limited, projecting `_id`).
async fn list(
    odm: &Odm,
    collection: &str,
    filter: Document,
    session: Option<&mut ClientSession>,
) -> Result<Vec<Bson>> {
    let options = FindOptions::builder()
        .projection(doc! { "_id": 1 })
        .sort(doc! { "_id": 1 })
        .limit(DeleteRestricted::LISTED as i64)
        .build();
    let docs = crate::engine::find_documents(odm, collection, filter, options, session).await?;
    Ok(docs.iter().filter_map(|d| d.get("_id").cloned()).collect())
}

pub(super) fn plan_level<'a>(
    odm: &'a Odm,
    plan: &'a mut Plan,
    collection: String,
    (ids, keyed): (Vec<Bson>, Vec<Document>),
    chain: Vec<String>,
    mut session: Option<&'a mut ClientSession>,
) -> crate::engine::BoxFuture<'a, Result<()>> {
    let depth = chain.len() - 1;
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
        plan.keyed.push(keyed);
        plan_copies(odm, plan, &collection, &ids, &chain, session.as_deref_mut()).await?;
        plan_references(odm, plan, &collection, &ids, &chain, session).await
    })
}

/// The summaries of the deleted documents held elsewhere: pulled or cleared with them (or the
/// delete refused when one is required), and the latest-N arrays of their parents noted.
async fn plan_copies(
    odm: &Odm,
    plan: &mut Plan,
    collection: &str,
    ids: &[Bson],
    chain: &[String],
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    // Summaries of the deleted documents go with them (`parts: [{id, name}]`).
    for copy in odm.catalog().copies_from(collection) {
        match &copy.kind {
            crate::catalog::CopyKind::Summary {
                array: true, id, ..
            } => {
                plan.summaries.push(plan.updates.len());
                plan.updates.push((
                    Matching {
                        collection: copy.dependent.to_owned(),
                        key: copy.dependents_key(),
                        ids: ids.to_vec(),
                        dbref: None,
                        kind: copy.dependent_kind,
                        owner: None,
                    },
                    Change::Pull {
                        path: copy.path.clone(),
                        field: Some(id.clone()),
                        dbref: None,
                    },
                ));
            }
            // A single summary: cleared when it may be absent, else the delete is refused
            // (a required summary of a document that no longer exists cannot be kept).
            crate::catalog::CopyKind::Summary {
                array: false,
                id,
                optional,
            } => {
                let holders = Matching {
                    collection: copy.dependent.to_owned(),
                    key: copy.dependents_key(),
                    ids: ids.to_vec(),
                    dbref: None,
                    kind: copy.dependent_kind,
                    owner: None,
                };
                if *optional {
                    plan.summaries.push(plan.updates.len());
                    plan.updates.push((
                        holders,
                        Change::Fixed(doc! { "$set": { copy.path.as_str(): Bson::Null } }),
                    ));
                } else {
                    plan.checks.push((
                        collection.to_owned(),
                        format!("{}.{id}", copy.path),
                        holders,
                        chain.to_vec(),
                    ));
                }
            }
            // A parent's latest-N array loses the deleted ones and takes the next latest.
            crate::catalog::CopyKind::Latest { .. } => {
                plan_latest(odm, plan, collection, ids, copy, session.as_deref_mut()).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The parents of the deleted documents whose latest-N array `copy` they feed: recomputed once
/// the deletes are done. One `find` per chunk of ids, naming the key values read with them.
async fn plan_latest(
    odm: &Odm,
    plan: &mut Plan,
    collection: &str,
    ids: &[Bson],
    copy: &crate::catalog::CopyInfo,
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    let mut parents = Vec::new();
    let mut known = std::collections::HashSet::new();
    // Routed: the key's values read with the ids.
    let carrier = crate::catalog::KeyCarrier::of(odm.catalog(), collection);
    let read: std::collections::HashMap<IdKey, Document> = plan
        .keyed
        .last()
        .into_iter()
        .flatten()
        .filter_map(|d| Some((IdKey::of(d.get("_id")?), d.clone())))
        .collect();
    for chunk in crate::batch::chunks_of(ids) {
        let mut filter = crate::literal::is_in("_id", chunk.clone());
        carrier.restrict(
            &mut filter,
            chunk.iter().filter_map(|id| read.get(&IdKey::of(id))),
        );
        let found = crate::denormalize::parents_of(
            odm,
            collection,
            filter,
            std::slice::from_ref(copy),
            session.as_deref_mut(),
        )
        .await?;
        for p in found.into_iter().next().unwrap_or_default() {
            if known.insert(IdKey::of(&p)) {
                parents.push(p);
            }
        }
    }
    if !parents.is_empty() {
        plan.latest.push((copy.clone(), parents));
    }
    Ok(())
}

/// The rule of every reference to the deleted documents: what it will write, the documents
/// its cascades delete (level after level), the `restrict` checks to make.
async fn plan_references(
    odm: &Odm,
    plan: &mut Plan,
    collection: &str,
    ids: &[Bson],
    chain: &[String],
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    for r in odm.catalog().references_to(collection) {
        let holders = Matching {
            collection: r.from.to_owned(),
            key: r.path.clone(),
            ids: ids.to_vec(),
            dbref: r.dbref.map(|target| {
                let db = odm.own_database().name().to_owned();
                (target, r.kind == RefKind::Many, db)
            }),
            kind: r.from_kind,
            owner: Some(r.from_type),
        };
        match r.on_delete {
            OnDelete::Restrict => {
                plan.checks.push((
                    collection.to_owned(),
                    r.path.clone(),
                    holders,
                    chain.to_vec(),
                ));
            }
            OnDelete::Cascade if deleted_by_reference(odm.catalog(), r, collection) => {
                plan.filter_deletes.push(holders);
            }
            OnDelete::Cascade => {
                let mut children = (Vec::new(), Vec::new());
                for chunk in holders.chunks(ids, crate::batch::MAX_IDS_BYTES) {
                    let (ids, keyed) = find_keyed(
                        odm,
                        r.from,
                        holders.filter(chunk),
                        false,
                        session.as_deref_mut(),
                    )
                    .await?;
                    children.0.extend(ids);
                    children.1.extend(keyed);
                }
                let mut deeper = chain.to_vec();
                deeper.push(format!("`{}` ({})", r.from, r.path));
                plan_level(
                    odm,
                    plan,
                    r.from.to_owned(),
                    children,
                    deeper,
                    session.as_deref_mut(),
                )
                .await?;
            }
            OnDelete::Pull => {
                let change = Change::Pull {
                    path: r.path.clone(),
                    field: None,
                    dbref: r.dbref.map(|t| (t, odm.own_database().name().to_owned())),
                };
                plan.updates.push((holders, change));
            }
            OnDelete::Nullify => {
                let change = nullify(odm, r);
                plan.updates.push((holders, change));
            }
        }
    }
    Ok(())
}

/// Whether the documents a `cascade` rule `r` deletes with a document of `collection` are
/// deleted by the reference (`{r.path: {$in: ids}}`), without reading their ids: when nothing
/// references their collection and nothing copies their documents but the latest-N array of
/// the parent being deleted (a host's squillions of log messages). The routing report reads
/// it too.
pub(crate) fn deleted_by_reference(
    catalog: &crate::catalog::Catalog,
    r: &crate::catalog::ReferenceInfo,
    collection: &str,
) -> bool {
    catalog.references_to(r.from).is_empty()
        && catalog.copies_from(r.from).iter().all(|c| {
            matches!(&c.kind, crate::catalog::CopyKind::Latest { via, .. }
                if *via == r.path && c.dependent == collection)
        })
}

/// The change of a `nullify` rule: the id pulled from an array of references, or the single
/// reference set to `null` with the copies taken through it cleared.
fn nullify(odm: &Odm, r: &crate::catalog::ReferenceInfo) -> Change {
    if r.kind == RefKind::Many {
        return Change::Pull {
            path: r.path.clone(),
            field: None,
            dbref: r.dbref.map(|t| (t, odm.own_database().name().to_owned())),
        };
    }
    let mut update = doc! { "$set": { r.path.as_str(): Bson::Null } };
    // Copies taken through this reference describe a document that is gone: clear them with it.
    let cleared: Document = odm
        .catalog()
        .copies_into(r.from)
        .iter()
        .filter(|c| matches!(&c.kind, crate::catalog::CopyKind::Flat { via } if *via == r.path))
        .map(|c| (c.path.clone(), Bson::String(String::new())))
        .collect();
    if !cleared.is_empty() {
        update.insert("$unset", cleared);
    }
    Change::Fixed(update)
}

/// The plan of deleting what `filter` matches in `collection` (the first match only unless
/// `many`): the ids read, every level of rules, the `restrict` checks made.
pub(super) async fn delete_in(
    odm: &Odm,
    collection: &str,
    filter: Document,
    many: bool,
    mut session: Option<&mut ClientSession>,
) -> Result<Plan> {
    let root = format!("`{collection}` {}", crate::error::show_filter(&filter));
    let (ids, keyed) = find_keyed(odm, collection, filter, !many, session.as_deref_mut()).await?;
    if ids.is_empty() {
        return Ok(Plan::default());
    }
    let mut plan = Plan::default();
    plan_level(
        odm,
        &mut plan,
        collection.to_owned(),
        (ids, keyed),
        vec![root],
        session.as_deref_mut(),
    )
    .await?;
    plan.check(odm, session).await?;
    Ok(plan)
}
