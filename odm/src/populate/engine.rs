//! The populate engine: collect ids, fetch them with one `$in` query per relation and level,
//! attach the documents.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

pub(crate) use super::step::BoxFuture;
pub use super::step::Step;
use super::step::{with_id, ById, Fetched};
use super::{Dangling, Populate, RefSlots};
use crate::document::IdKey;
use crate::model::Model;
use crate::{Error, Odm, Result};

/// A path's fetch (its next levels nested) traced as a `populate` step of `Root`.
async fn populate_step<Root: Model>(fetch: BoxFuture<'_, Result<Fetched>>) -> Result<Fetched> {
    crate::trace::step!("populate", Root::COLLECTION, fetch).await
}

/// Runs every step on `docs`: ids collected, all steps fetched (concurrently, unless a session
/// is given, which serialises them), then attached.
pub(crate) async fn populate_all<Root: Model>(
    odm: &Odm,
    docs: &mut [Root],
    steps: &[Box<dyn Step<Root>>],
    session: Option<&mut ClientSession>,
) -> Result<()> {
    if steps.is_empty() || docs.is_empty() {
        return Ok(());
    }
    let mut ids = Vec::with_capacity(steps.len());
    for step in steps {
        ids.push(step.collect(docs)?);
    }
    let fetched: Vec<Fetched> = match session {
        None => {
            let futures = steps
                .iter()
                .zip(ids)
                .map(|(step, ids)| populate_step::<Root>(step.fetch(odm, ids, None)));
            futures_util::future::try_join_all(futures).await?
        }
        Some(session) => {
            let mut out = Vec::with_capacity(steps.len());
            for (step, ids) in steps.iter().zip(ids) {
                out.push(populate_step::<Root>(step.fetch(odm, ids, Some(&mut *session))).await?);
            }
            out
        }
    };
    for (step, fetched) in steps.iter().zip(fetched) {
        step.attach(docs, fetched)?;
    }
    Ok(())
}

/// The ids in chunks under the command limits, and under the caller's batch size if any.
fn batches(ids: Vec<Bson>, max_ids: Option<usize>) -> Vec<Vec<Bson>> {
    let count = max_ids.map_or(crate::batch::MAX_IDS, |m| m.clamp(1, crate::batch::MAX_IDS));
    crate::batch::chunks_within(ids, crate::batch::MAX_IDS_BYTES, count)
}

fn encode_id<T: Model>(id: &T::Id) -> Result<Bson> {
    crate::path::encode_value(id).map_err(|e| encode_error::<T>(e))
}

fn key_of<T: Model>(id: &T::Id) -> Result<IdKey> {
    IdKey::of_id(id).map_err(|e| encode_error::<T>(e))
}

fn encode_error<T: Model>(e: bson::error::Error) -> Error {
    Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "reference id".to_owned(),
        message: e.to_string(),
    }
}

impl<Root: Model, T: Model> Populate<Root, T> {
    async fn find_batch(
        &self,
        odm: &Odm,
        ids: Vec<Bson>,
        session: Option<&mut ClientSession>,
    ) -> Result<Vec<T>> {
        let by_id = crate::literal::is_in("_id", ids);
        let filter = match &self.filter {
            Some(f) => doc! { "$and": [by_id, f.clone().into_document(T::COLLECTION)?] },
            None => by_id,
        };
        // A reference to one kind loads documents of that kind only: another kind under the
        // same id is a dangling reference, not a document decoded as the wrong kind.
        let filter = match T::entry().kind {
            Some(kind) => kind.restrict(filter),
            None => filter,
        };
        let mut options = FindOptions::default();
        options.projection = self.projection.clone().map(with_id);
        options.sort = self.sort.clone();
        crate::engine::find_decoded::<T, T>(odm, filter, options, session).await
    }

    fn dangling_error(&self, parent: &Root, missing: &T::Id) -> Error {
        Error::DanglingReference {
            collection: Root::COLLECTION.to_owned(),
            id: crate::error::show_id(
                parent
                    .document_id()
                    .and_then(|id| crate::path::encode_value(id).ok())
                    .as_ref(),
            ),
            path: self.path.clone(),
            target: T::COLLECTION.to_owned(),
            missing: crate::path::encode_value(missing)
                .map_or_else(|_| format!("{missing:?}"), |b| b.to_string()),
        }
    }
}

impl<Root: Model, T: Model> Populate<Root, T> {
    /// Loads each of `refs` found by `find`; returns the first missing id and each reference's
    /// rank among the fetched documents (`usize::MAX` when not loaded).
    #[allow(clippy::type_complexity)]
    fn load_ranked(
        &self,
        refs: &mut [&mut Ref<T>],
        find: &dyn Fn(&Ref<T>) -> Result<Option<(usize, Arc<T>)>>,
    ) -> Result<(Option<T::Id>, Vec<usize>)> {
        let mut missing = None;
        let mut ranks = Vec::with_capacity(refs.len());
        for r in refs.iter_mut() {
            match find(r)? {
                Some((rank, d)) => {
                    r.set_loaded(d);
                    ranks.push(rank);
                }
                None => {
                    if missing.is_none() {
                        missing = Some(r.id().clone());
                    }
                    ranks.push(usize::MAX);
                }
            }
        }
        Ok((missing, ranks))
    }

    /// Applies the per-parent limit: keeps loaded the first `n` of `refs` (by rank when the
    /// populate is sorted, else as stored) and unloads the others, ranking them with the
    /// references not loaded (last, in their stored order), as the lookup plan, which does not
    /// return them, would.
    fn keep_first(&self, refs: &mut [&mut Ref<T>], ranks: &mut [usize]) {
        let Some(n) = self.limit else {
            return;
        };
        let mut loaded: Vec<usize> = (0..refs.len())
            .filter(|&i| ranks[i] != usize::MAX)
            .collect();
        if self.sort.is_some() {
            loaded.sort_by_key(|&i| ranks[i]);
        }
        for &i in loaded.iter().skip(n) {
            refs[i].unload();
            ranks[i] = usize::MAX;
        }
    }

    /// Whether the per-parent limit was reached: the references not loaded may then be past
    /// it rather than missing (the lookup plan does not return them), so they are not checked.
    fn past_limit(&self, ranks: &[usize]) -> bool {
        self.limit
            .is_some_and(|n| ranks.iter().filter(|r| **r != usize::MAX).count() >= n)
    }
}

impl<Root: Model, T: Model> Step<Root> for Populate<Root, T> {
    fn collect(&self, docs: &mut [Root]) -> Result<Vec<Bson>> {
        let mut seen = HashSet::new();
        let mut ids = Vec::new();
        let mut add = |r: &crate::Ref<T>| -> Result<()> {
            let key = key_of::<T>(r.id())?;
            if !seen.contains(&key) {
                ids.push(match key.to_bson() {
                    Some(b) => b,
                    None => encode_id::<T>(r.id())?,
                });
                seen.insert(key);
            }
            Ok(())
        };
        for doc in docs.iter_mut() {
            match (self.slots)(doc) {
                RefSlots::One(r) => add(r)?,
                RefSlots::Optional(Some(r)) => add(r)?,
                RefSlots::Optional(None) => {}
                RefSlots::Many(v) => {
                    for r in v.iter() {
                        add(r)?;
                    }
                }
                RefSlots::Maybe(r) => {
                    if let Some(r) = r {
                        add(r)?;
                    }
                }
                RefSlots::Each(v) => {
                    for r in v {
                        add(r)?;
                    }
                }
            }
        }
        Ok(ids)
    }

    fn fetch<'a>(
        &'a self,
        odm: &'a Odm,
        ids: Vec<Bson>,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let chunks = batches(ids, self.batch_size);
            if self.sort.is_some() && chunks.len() > 1 {
                return Err(Error::Unsupported(format!(
                    "a sorted populate of `{}` needs more than one query ({} batches): sort the loaded documents in your code instead",
                    self.path,
                    chunks.len()
                )));
            }
            let mut docs: Vec<T> = Vec::new();
            let mut session = session;
            match session.as_deref_mut() {
                None => {
                    let futures = chunks.into_iter().map(|c| self.find_batch(odm, c, None));
                    for part in futures_util::future::try_join_all(futures).await? {
                        docs.extend(part);
                    }
                }
                Some(s) => {
                    for chunk in chunks {
                        docs.extend(self.find_batch(odm, chunk, Some(&mut *s)).await?);
                    }
                }
            }
            populate_all(odm, &mut docs, &self.children, session).await?;
            let mut by_id = HashMap::with_capacity(docs.len());
            for (rank, doc) in docs.into_iter().enumerate() {
                let Some(id) = doc.document_id() else {
                    continue;
                };
                let key = IdKey::of(&encode_id::<T>(id)?);
                by_id.insert(key, (rank, Arc::new(doc)));
            }
            Ok(Fetched(Box::new(ById { docs: by_id })))
        })
    }

    fn lookup_stages(&self, index: usize) -> Result<Vec<Document>> {
        super::lookup::lookup_stages(self, index)
    }

    fn attach_looked_up(
        &self,
        odm: &Odm,
        docs: &mut [Root],
        raws: &[&bson::RawDocument],
        field: &str,
    ) -> Result<()> {
        super::lookup::attach_looked_up(self, odm, docs, raws, field)
    }

    fn levels(&self) -> usize {
        1 + self.children.iter().map(|c| c.levels()).max().unwrap_or(0)
    }

    fn relations(&self) -> usize {
        1 + self.children.iter().map(|c| c.relations()).sum::<usize>()
    }

    fn attach(&self, docs: &mut [Root], fetched: Fetched) -> Result<()> {
        let by_id = fetched.0.downcast::<ById<T>>().map_err(|_| {
            Error::Unsupported("populate: fetched documents of another type".into())
        })?;
        // With a filter, a reference whose document was not loaded may just not match it.
        let policy = if self.filter.is_some() {
            Dangling::Keep
        } else {
            self.dangling
        };
        let find = |r: &crate::Ref<T>| -> Result<Option<(usize, Arc<T>)>> {
            let key = key_of::<T>(r.id())?;
            Ok(by_id
                .docs
                .get(&key)
                .map(|(rank, doc)| (*rank, Arc::clone(doc))))
        };
        for doc in docs.iter_mut() {
            let mut missing: Option<T::Id> = None;
            match (self.slots)(doc) {
                RefSlots::One(r) => match find(r)? {
                    Some((_, d)) => r.set_loaded(d),
                    None => missing = Some(r.id().clone()),
                },
                RefSlots::Optional(slot) => {
                    if let Some(r) = slot {
                        match find(r)? {
                            Some((_, d)) => r.set_loaded(d),
                            None if policy == Dangling::Skip => *slot = None,
                            None => missing = Some(r.id().clone()),
                        }
                    }
                }
                // Mixed references are not removed from their array, nor reordered: skipped,
                // they stay unloaded.
                RefSlots::Maybe(r) => {
                    if let Some(r) = r {
                        missing = self.load_ranked(&mut [r], &find)?.0;
                    }
                }
                RefSlots::Each(mut refs) => {
                    let (first_missing, mut ranks) = self.load_ranked(&mut refs, &find)?;
                    missing = first_missing.filter(|_| !self.past_limit(&ranks));
                    self.keep_first(&mut refs, &mut ranks);
                }
                RefSlots::Many(refs) => {
                    let mut slots: Vec<&mut Ref<T>> = refs.iter_mut().collect();
                    let (first_missing, mut ranks) = self.load_ranked(&mut slots, &find)?;
                    let cut = self.past_limit(&ranks);
                    self.keep_first(&mut slots, &mut ranks);
                    drop(slots);
                    missing = first_missing.filter(|_| !cut);
                    if policy == Dangling::Skip && !cut {
                        refs.retain(Ref::is_loaded);
                        ranks.retain(|r| *r != usize::MAX);
                        missing = None;
                    }
                    if self.sort.is_some() {
                        let mut paired: Vec<_> = ranks.into_iter().zip(refs.drain(..)).collect();
                        paired.sort_by_key(|(rank, _)| *rank);
                        refs.extend(paired.into_iter().map(|(_, r)| r));
                    }
                }
            }
            if let (Some(id), Dangling::Error) = (missing, policy) {
                return Err(self.dangling_error(doc, &id));
            }
        }
        Ok(())
    }
}

use crate::Ref;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_the_id_limit_and_keep_order() {
        let ids: Vec<Bson> = (0..10).map(Bson::Int32).collect();
        let b = batches(ids, Some(4));
        assert_eq!(b.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 2]);
        assert_eq!(b[2], [Bson::Int32(8), Bson::Int32(9)]);
    }

    #[test]
    fn batches_stay_under_the_command_size_limit() {
        let ids: Vec<Bson> = (0..1_000_000)
            .map(|_| Bson::ObjectId(bson::oid::ObjectId::new()))
            .collect();
        let b = batches(ids, None);
        assert!(b.len() >= 2);
        for batch in b {
            let bytes: usize = batch
                .iter()
                .enumerate()
                .map(|(i, id)| crate::batch::element_size(i, id))
                .sum();
            assert!(bytes <= crate::batch::MAX_IDS_BYTES);
        }
    }

    #[test]
    fn projections_keep_the_id() {
        assert_eq!(with_id(doc! {"name": 1}), doc! {"name": 1, "_id": 1});
        assert_eq!(
            with_id(doc! {"name": 1, "_id": 0}),
            doc! {"name": 1, "_id": 1}
        );
        assert_eq!(with_id(doc! {"blob": 0}), doc! {"blob": 0});
    }
}
