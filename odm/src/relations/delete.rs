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
use mongodb::options::{FindOptions, UpdateModifications};
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
    /// For a check reached through cascades: the delete asked for (collection and filter),
    /// then each collection cascaded into, with the reference followed (`logmsg (host)`).
    /// Empty when the restricted collection is the one the delete was on.
    pub chain: Vec<String>,
}

impl fmt::Display for DeleteRestricted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [first, rest @ ..] = self.chain.as_slice() {
            if !rest.is_empty() {
                return write!(
                    f,
                    "cannot delete: deleting {first} cascades to {}, which is restricted by `{}.{}`: {} document(s) reference it (on_delete = \"restrict\")",
                    rest.join(", which cascades to "),
                    self.referenced_by,
                    self.path,
                    self.count
                );
            }
        }
        write!(
            f,
            "cannot delete from `{}`: {} document(s) in `{}` reference them through `{}` (on_delete = \"restrict\")",
            self.collection, self.count, self.referenced_by, self.path
        )
    }
}

/// Cascades deeper than this are refused (a cycle of cascade rules, most likely).
const MAX_DEPTH: usize = 16;

/// What a pull or nullify rule writes to the documents it matches.
enum Change {
    /// `{$pullAll: {path: ids}}`, or `{$pull: {path: {field: {$in: ids}}}}` for an array
    /// of summaries: built per chunk of ids, since it repeats them.
    Pull {
        path: String,
        field: Option<String>,
        /// The `$ref` and the database of DBRefs.
        dbref: Option<(&'static str, String)>,
    },
    /// An update that does not depend on the ids (`$set` to null, `$unset`).
    Fixed(Document),
}

impl Change {
    /// The update of `ids`, with the holders' `stamps`.
    fn update(&self, ids: &[Bson], stamps: crate::schema::Stamps) -> UpdateModifications {
        let mut update = match self {
            // DBRefs whatever their fields' order: a pipeline testing each element.
            Change::Pull {
                path,
                dbref: Some((target, db)),
                ..
            } => {
                return UpdateModifications::Pipeline(crate::reference::dbref::pull_pipeline(
                    path,
                    target,
                    ids.to_vec(),
                    Some(db),
                    stamps,
                ))
            }
            Change::Pull {
                path,
                field: None,
                dbref: None,
            } => crate::literal::pull_all(path, ids.to_vec()),
            Change::Pull {
                path,
                field: Some(f),
                ..
            } => doc! { "$pull": { path.as_str(): crate::literal::is_in(f, ids.to_vec()) } },
            Change::Fixed(update) => update.clone(),
        };
        crate::versioning::stamp_follow_up(&mut update, stamps);
        UpdateModifications::Document(update)
    }

    /// The id budget of one statement: halved when the update repeats the filter's ids.
    fn budget(&self) -> usize {
        match self {
            Change::Pull { .. } => crate::batch::MAX_IDS_BYTES / 2,
            Change::Fixed(_) => crate::batch::MAX_IDS_BYTES,
        }
    }
}

/// The documents of a collection whose `key` holds one of `ids` (`{key: {$in: ids}}`, sent
/// per [chunk](crate::batch) of ids).
struct Matching {
    collection: String,
    key: String,
    ids: Vec<Bson>,
    /// For references stored as DBRefs: the `$ref` they hold, whether `key` is an array, and
    /// the database deleted from (which their `$db`, when they have one, names).
    dbref: Option<(&'static str, bool, String)>,
    /// When the holders are a kind of a polymorphic model: its discriminator.
    kind: Option<crate::kind::Kind>,
    /// The holders' version and `updated_at`, which a rule's write of a reference updates:
    /// a stale replacement of a holder is then a conflict, and does not bring back the
    /// reference the rule removed.
    stamps: crate::schema::Stamps,
}

impl Matching {
    fn filter(&self, chunk: Vec<Bson>) -> Document {
        let filter = self.key_filter(chunk);
        match self.kind {
            Some(kind) => kind.restrict(filter),
            None => filter,
        }
    }

    fn key_filter(&self, chunk: Vec<Bson>) -> Document {
        match self.dbref {
            None => crate::literal::is_in(&self.key, chunk),
            // One DBRef: its fields, so that one written in another order matches; one naming
            // another database (`$db`) is not this database's document.
            Some((target, false, ref db)) => {
                let key = &self.key;
                let mut d = crate::literal::eq(&format!("{key}.$ref"), target.into());
                d.extend(crate::literal::is_in(&format!("{key}.$id"), chunk));
                d.extend(crate::literal::is_in(
                    &format!("{key}.$db"),
                    vec![Bson::Null, Bson::String(db.clone())],
                ));
                d
            }
            // An array of DBRefs: an element that is one of them, in any field order and with
            // any other fields, without a `$db` or naming this database (two conditions on
            // the dotted fields alone could be met by two different elements).
            Some((target, true, ref db)) => {
                crate::reference::dbref::array_holds(&self.key, target, chunk, Some(db))
            }
        }
    }

    /// `ids` in chunks whose filter (and an update repeating them) stays within `bytes`. A
    /// reference stored as a DBRef names its ids more than once: an array's filter twice (the
    /// dotted `$id` and the test of each element) and its pull once more, a single one's filter
    /// once with the collection's name beside it: a third of the budget each.
    fn chunks(&self, ids: &[Bson], bytes: usize) -> Vec<Vec<Bson>> {
        let bytes = match self.dbref {
            Some(_) => bytes / 3,
            None => bytes,
        };
        crate::batch::chunks_within(ids.to_vec(), bytes, crate::batch::MAX_IDS)
    }

    /// Whether the document `d` (projected on `key`) holds one of `ids`.
    fn holds(&self, d: &Document, ids: &std::collections::HashSet<IdKey>) -> bool {
        if self.kind.is_some_and(|k| !k.holds(d)) {
            return false;
        }
        let one = |v: &Bson| match &self.dbref {
            None => ids.contains(&IdKey::of(v)),
            Some((target, _, db)) => v.as_document().is_some_and(|r| {
                r.get_str("$ref").is_ok_and(|c| c == *target)
                    && r.get("$id").is_some_and(|id| ids.contains(&IdKey::of(id)))
                    && r.get_str("$db").map_or(true, |d| d == db)
            }),
        };
        match crate::denormalize::value_at(d, &self.key) {
            Bson::Array(items) => items.iter().any(one),
            v => one(&v),
        }
    }
}

#[derive(Default)]
struct Plan {
    /// Ids to delete per collection, in the order they were reached (parents first).
    deletes: Vec<(String, Vec<Bson>)>,
    /// For each entry of `deletes`, the documents as read with their ids, holding their shard
    /// key's values (empty for a collection without a key to carry): the delete names them, so
    /// that it is routed (see [`crate::shard::KeyCarrier`]).
    keyed: Vec<Vec<Document>>,
    /// The documents pull and nullify rules update, and how.
    updates: Vec<(Matching, Change)>,
    /// Which of `updates` take out summaries copied from the deleted documents: sent again
    /// once the delete is visible to other writers (see [`Resend`]).
    summaries: Vec<usize>,
    /// Cascades into collections nothing references: deleted by filter, without reading their
    /// ids (a host's squillions of log messages).
    filter_deletes: Vec<Matching>,
    seen: BTreeMap<String, std::collections::HashSet<IdKey>>,
    /// Latest-N arrays to recompute once the deletes are done, with the parents concerned.
    latest: Vec<(crate::denormalize::CopyInfo, Vec<Bson>)>,
    /// `restrict` checks, made once the plan is complete so that documents the plan deletes
    /// anyway do not count: (collection deleted from, path, holders, cascade chain).
    checks: Vec<(String, String, Matching, Vec<String>)>,
}

/// The ids a plan may name and still run in one transaction the ODM opens: the size of one
/// command. A larger delete is too much for one transaction (MongoDB's storage engine cache,
/// its 60-second transaction lifetime) and runs in batches without one instead.
const MAX_TRANSACTION_ID_BYTES: usize = crate::batch::MAX_COMMAND_BYTES;

impl Plan {
    /// The plan, unless it names more ids than one transaction should hold: then an error that
    /// [`is_too_large`](crate::denormalize::is_too_large) recognises, so that the delete falls
    /// back to batches.
    fn fits_one_transaction(self) -> Result<Plan> {
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

    /// Refuses the delete if a `restrict` check finds a holder the plan does not delete.
    /// One `aggregate` (a count) per check; when the check's filter would pass the
    /// [id budget](crate::batch) of one command, one `find` of the holders' ids per chunk
    /// instead, the ones the plan deletes taken out here.
    async fn check(&self, odm: &Odm, mut session: Option<&mut ClientSession>) -> Result<()> {
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
            let n = if fits {
                count(odm, holder, filter, session.as_deref_mut()).await?
            } else {
                self.count_left(odm, holders, &by_filter, session.as_deref_mut())
                    .await?
            };
            if n > 0 {
                return Err(Error::DeleteRestricted(DeleteRestricted {
                    collection: collection.clone(),
                    referenced_by: holder.clone(),
                    path: path.clone(),
                    count: n,
                    chain: chain.clone(),
                }));
            }
        }
        Ok(())
    }

    /// The holders a check finds that the plan does not delete, counted here: one `find` per
    /// chunk of the check's ids, projecting `_id` and the references of the by-filter deletes.
    async fn count_left(
        &self,
        odm: &Odm,
        holders: &Matching,
        by_filter: &[&Matching],
        mut session: Option<&mut ClientSession>,
    ) -> Result<u64> {
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
        for chunk in holders.chunks(&holders.ids, crate::batch::MAX_IDS_BYTES) {
            let options = FindOptions::builder()
                .projection(projection.clone())
                .build();
            let found = crate::ops::find_documents(
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
                if !by_rule {
                    left.insert(id);
                }
            }
        }
        Ok(left.len() as u64)
    }
}

/// The ids of the documents `filter` matches and, when `collection` has a shard key to carry,
/// the documents read (the id and the key's fields): one `find`.
async fn find_keyed(
    odm: &Odm,
    collection: &str,
    filter: Document,
    limit_one: bool,
    session: Option<&mut ClientSession>,
) -> Result<(Vec<Bson>, Vec<Document>)> {
    let key = crate::shard::KeyCarrier::of(collection);
    let mut projection = doc! { "_id": 1 };
    key.project(&mut projection);
    let options = FindOptions::builder()
        .projection(projection)
        .limit(limit_one.then_some(1))
        .build();
    let docs = crate::ops::find_documents(odm, collection, filter, options, session).await?;
    let ids = docs.iter().filter_map(|d| d.get("_id").cloned()).collect();
    Ok((ids, if key.is_empty() { Vec::new() } else { docs }))
}

async fn count(
    odm: &Odm,
    collection: &str,
    filter: Document,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let coll = odm.database().collection::<Document>(collection);
    let action = coll.count_documents(filter);
    crate::ops::send!(action, session).map_err(|e| Error::from_driver(collection, e))
}

fn plan_level<'a>(
    odm: &'a Odm,
    plan: &'a mut Plan,
    collection: String,
    (ids, keyed): (Vec<Bson>, Vec<Document>),
    chain: Vec<String>,
    mut session: Option<&'a mut ClientSession>,
) -> crate::populate::BoxFuture<'a, Result<()>> {
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
        // Summaries of the deleted documents go with them (`parts: [{id, name}]`).
        for copy in crate::denormalize::copies_from(&collection) {
            match &copy.kind {
                crate::denormalize::CopyKind::Summary {
                    array: true, id, ..
                } => {
                    plan.summaries.push(plan.updates.len());
                    plan.updates.push((
                        Matching {
                            collection: copy.dependent.to_owned(),
                            key: copy.dependents_key(),
                            ids: ids.clone(),
                            dbref: None,
                            kind: copy.dependent_kind,
                            stamps: crate::schema::Stamps::NONE,
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
                crate::denormalize::CopyKind::Summary {
                    array: false,
                    id,
                    optional,
                } => {
                    let holders = Matching {
                        collection: copy.dependent.to_owned(),
                        key: copy.dependents_key(),
                        ids: ids.clone(),
                        dbref: None,
                        kind: copy.dependent_kind,
                        stamps: crate::schema::Stamps::NONE,
                    };
                    if *optional {
                        plan.summaries.push(plan.updates.len());
                        plan.updates.push((
                            holders,
                            Change::Fixed(doc! { "$set": { copy.path.as_str(): Bson::Null } }),
                        ));
                    } else {
                        plan.checks.push((
                            collection.clone(),
                            format!("{}.{id}", copy.path),
                            holders,
                            chain.clone(),
                        ));
                    }
                }
                // A parent's latest-N array loses the deleted ones and takes the next latest.
                crate::denormalize::CopyKind::Latest { .. } => {
                    let mut parents = Vec::new();
                    let mut known = std::collections::HashSet::new();
                    // Routed: the key's values read with the ids.
                    let carrier = crate::shard::KeyCarrier::of(&collection);
                    let read: std::collections::HashMap<IdKey, Document> = plan
                        .keyed
                        .last()
                        .into_iter()
                        .flatten()
                        .filter_map(|d| Some((IdKey::of(d.get("_id")?), d.clone())))
                        .collect();
                    for chunk in crate::batch::chunks_of(&ids) {
                        let mut filter = crate::literal::is_in("_id", chunk.clone());
                        carrier.restrict(
                            &mut filter,
                            chunk.iter().filter_map(|id| read.get(&IdKey::of(id))),
                        );
                        let found = crate::denormalize::parents_of(
                            odm,
                            &collection,
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
                }
                _ => {}
            }
        }
        for r in references_to(&collection) {
            let holders = Matching {
                collection: r.from.to_owned(),
                key: r.path.clone(),
                ids: ids.clone(),
                dbref: r.dbref.map(|target| {
                    let db = odm.database().name().to_owned();
                    (target, r.kind == RefKind::Many, db)
                }),
                kind: r.from_kind,
                stamps: r.from_stamps,
            };
            match r.on_delete {
                OnDelete::Restrict => {
                    plan.checks
                        .push((collection.clone(), r.path.clone(), holders, chain.clone()));
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
                    plan.filter_deletes.push(holders);
                }
                OnDelete::Cascade => {
                    let mut children = (Vec::new(), Vec::new());
                    for chunk in holders.chunks(&ids, crate::batch::MAX_IDS_BYTES) {
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
                    let mut deeper = chain.clone();
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
                        dbref: r.dbref.map(|t| (t, odm.database().name().to_owned())),
                    };
                    plan.updates.push((holders, change));
                }
                OnDelete::Nullify => {
                    let change = match r.kind {
                        RefKind::Many => Change::Pull {
                            path: r.path.clone(),
                            field: None,
                            dbref: r.dbref.map(|t| (t, odm.database().name().to_owned())),
                        },
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
                            Change::Fixed(update)
                        }
                    };
                    plan.updates.push((holders, change));
                }
            }
        }
        Ok(())
    })
}

/// Summaries of deleted documents, taken out again once the delete is visible to every other
/// writer (after the ODM's transaction commits, or after the deletes without one).
///
/// An insert copying a source reads it, writes, then re-reads it (see
/// [`crate::denormalize`]'s `settle`) and takes out its summary when the source is gone. A
/// delete in a transaction pulls from the snapshot it read, which cannot hold a document
/// inserted meanwhile; without a transaction the pull comes before the delete. Either way an
/// insert whose re-read still saw the source, because the delete was not yet visible, lands
/// before this second pass, which then finds it: between the two, no summary of a deleted
/// source outlives the delete.
#[must_use = "send the summaries' updates again once the delete is visible"]
struct Resend(Vec<(Matching, Change)>);

impl Resend {
    /// One `update` per collection holding summaries of the deleted documents (per chunk of
    /// ids); nothing when they have none.
    async fn send(self, odm: &Odm) -> Result<()> {
        for (holders, change) in self.0 {
            write_update(odm, &holders, &change, None).await?;
        }
        Ok(())
    }
}

/// One `update_many` per [chunk](crate::batch) of `holders`' ids, applying `change`.
async fn write_update(
    odm: &Odm,
    holders: &Matching,
    change: &Change,
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    let coll = odm.database().collection::<Document>(&holders.collection);
    for chunk in holders.chunks(&holders.ids, change.budget()) {
        let filter = holders.filter(chunk.clone());
        let target = crate::error::show_filter(&filter);
        let update = change.update(&chunk, holders.stamps);
        let action = coll.update_many(filter, update);
        crate::ops::send!(action, session.as_deref_mut())
            .map_err(|e| Error::from_write(&holders.collection, || target, e))?;
    }
    Ok(())
}

/// The plan's writes, each sent per [chunk](crate::batch) of the ids it names; returns the
/// number of documents deleted from the root collection and the summaries' updates to send
/// again once the delete is visible.
async fn execute(
    odm: &Odm,
    plan: Plan,
    mut session: Option<&mut ClientSession>,
) -> Result<(u64, Resend)> {
    let mut again = Vec::new();
    for (i, (holders, change)) in plan.updates.into_iter().enumerate() {
        write_update(odm, &holders, &change, session.as_deref_mut()).await?;
        if plan.summaries.contains(&i) {
            again.push((holders, change));
        }
    }
    for holders in plan.filter_deletes {
        let coll = odm.database().collection::<Document>(&holders.collection);
        for chunk in holders.chunks(&holders.ids, crate::batch::MAX_IDS_BYTES) {
            let filter = holders.filter(chunk);
            let target = crate::error::show_filter(&filter);
            let action = coll.delete_many(filter);
            crate::ops::send!(action, session.as_deref_mut())
                .map_err(|e| Error::from_write(&holders.collection, || target, e))?;
        }
    }
    let mut root_deleted = 0;
    // Children (reached later) are deleted before their parents; the first entry is the root.
    // One entry of `keyed` per entry of `deletes`: pushed together.
    let deletes: Vec<_> = plan.deletes.into_iter().zip(plan.keyed).collect();
    for (i, ((collection, ids), keyed)) in deletes.into_iter().enumerate().rev() {
        let coll = odm.database().collection::<Document>(&collection);
        let carrier = crate::shard::KeyCarrier::of(&collection);
        let read: std::collections::HashMap<IdKey, &Document> = keyed
            .iter()
            .filter_map(|d| Some((IdKey::of(d.get("_id")?), d)))
            .collect();
        for chunk in crate::batch::chunks(ids) {
            let mut filter = crate::literal::is_in("_id", chunk.clone());
            // Routed: the key's values read with the ids.
            if !read.is_empty() {
                let docs = chunk
                    .iter()
                    .filter_map(|id| read.get(&IdKey::of(id)).copied());
                carrier.restrict(&mut filter, docs);
            }
            let target = crate::error::show_filter(&filter);
            let action = coll.delete_many(filter);
            let result = crate::ops::send!(action, session.as_deref_mut())
                .map_err(|e| Error::from_write(&collection, || target, e))?;
            if i == 0 {
                root_deleted += result.deleted_count;
            }
        }
    }
    for (copy, parents) in plan.latest {
        crate::denormalize::refresh_latest(odm, &copy, parents, session.as_deref_mut()).await?;
    }
    Ok((root_deleted, Resend(again)))
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
/// `hello` once per `Odm` and the transaction's `commitTransaction` when the ODM opened one;
/// outside a caller's session, once the delete is visible (after the commit), the `update`
/// of each collection holding summaries of the deleted documents again (see [`Resend`]).
/// Every command naming ids is sent once per [chunk](crate::batch) of them. A plan naming more
/// than 16 MiB of ids, or one the server finds too large for a transaction, is abandoned with
/// `abortTransaction` (nothing written) and planned and run again without a transaction.
pub(crate) async fn delete_with_rules(
    odm: &Odm,
    collection: &str,
    filter: Document,
    many: bool,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let (deleted, again) = match session {
        // The caller commits: what the delete pulled is all it can do (see the consistency
        // chapter: an insert outside that transaction may keep a summary until the sweep).
        Some(s) => {
            let plan = delete_in(odm, collection, filter, many, Some(&mut *s)).await?;
            return Ok(execute(odm, plan, Some(s)).await?.0);
        }
        None if odm.supports_transactions().await? => {
            let outcome = crate::retry::in_transaction(
                odm,
                &(collection, &filter, many),
                |odm, s, (collection, filter, many)| {
                    Box::pin(plan_and_execute(
                        odm,
                        collection,
                        (*filter).clone(),
                        *many,
                        s,
                    ))
                },
            )
            .await;
            match outcome {
                Err(e) if crate::denormalize::is_too_large(&e) => {
                    // More than one transaction can hold: nothing was written. The same plan,
                    // without a transaction, in the order that never leaves a reference
                    // dangling (see the module's documentation).
                    let plan = delete_in(odm, collection, filter, many, None).await?;
                    execute(odm, plan, None).await?
                }
                other => other?,
            }
        }
        None => {
            let plan = delete_in(odm, collection, filter, many, None).await?;
            execute(odm, plan, None).await?
        }
    };
    again.send(odm).await?;
    Ok(deleted)
}

/// The plan and its commands in the ODM's own transaction `s`; a plan too large for one
/// transaction is refused before anything is written.
async fn plan_and_execute(
    odm: &Odm,
    collection: &str,
    filter: Document,
    many: bool,
    s: &mut ClientSession,
) -> Result<(u64, Resend)> {
    let plan = delete_in(odm, collection, filter, many, Some(&mut *s))
        .await?
        .fits_one_transaction()?;
    execute(odm, plan, Some(s)).await
}

async fn delete_in(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule on DBRefs names its ids several times: the chunks keep each filter, and the
    /// pipeline that repeats the ids, under the command limit.
    #[test]
    fn chunks_of_dbrefs_are_measured_as_sent() {
        let target: &'static str = Box::leak("c".repeat(100).into_boxed_str());
        let ids: Vec<Bson> = (0..400_000).map(Bson::Int32).collect();
        for many in [false, true] {
            let holders = Matching {
                collection: "feed".into(),
                key: "mentions".into(),
                ids: ids.clone(),
                dbref: Some((target, many, "d".repeat(60))),
                kind: None,
                stamps: crate::schema::Stamps::NONE,
            };
            let change = Change::Pull {
                path: "mentions".into(),
                field: None,
                dbref: Some((target, "d".repeat(60))),
            };
            let chunks = holders.chunks(&holders.ids, change.budget());
            assert!(chunks.len() > 1);
            assert_eq!(chunks.iter().map(Vec::len).sum::<usize>(), ids.len());
            for chunk in chunks {
                let filter = holders.filter(chunk.clone());
                let update = match change.update(&chunk, crate::schema::Stamps::NONE) {
                    UpdateModifications::Document(d) => Bson::Document(d),
                    UpdateModifications::Pipeline(p) => {
                        Bson::Array(p.into_iter().map(Bson::Document).collect())
                    }
                    _ => unreachable!("a document or a pipeline"),
                };
                let bytes = bson::serialize_to_vec(&doc! { "q": filter, "u": update })
                    .unwrap()
                    .len();
                assert!(bytes < crate::batch::MAX_COMMAND_BYTES, "{bytes} bytes");
            }
        }
    }
}
