//! The reverse side of a reference: the children of many parents, with a per-parent sort and
//! limit, in one command.

use std::collections::HashMap;
use std::fmt;

use bson::{doc, Bson, Document, RawDocumentBuf};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::{RefPath, RefSlots};
use crate::decode::decode;
use crate::document::IdKey;
use crate::model::Model;
use crate::query::{Filter, Sort};
use crate::{Error, Odm, Result};

/// Builder returned by [`Odm::children`]; `.await` it for a [`ChildrenOf`].
///
/// Commands: without a limit, one `find` (`{link: {$in: parent ids}}`, plus `getMore`s for a
/// large result); with a per-parent limit, one `aggregate` that groups by parent with `$topN`
/// (or `$firstN` when unsorted), so that each parent gets its own `limit` children: a limit
/// never acts globally, and a parent with older children is never starved by busier ones.
/// Parents whose ids would pass the [id budget](crate::batch) of one command are split: one such
/// command per chunk of parents.
#[must_use = "the query runs when awaited"]
pub struct Children<'a, C: Model, P: Model> {
    odm: &'a Odm,
    path: String,
    slots: fn(&mut C) -> RefSlots<'_, P>,
    many: bool,
    parents: Vec<Bson>,
    error: Option<Error>,
    filter: Option<Filter<C>>,
    sort: Option<Document>,
    limit: Option<u32>,
    session: Option<&'a mut ClientSession>,
}

impl<C: Model, P: Model> fmt::Debug for Children<'_, C, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("path", &self.path)
            .field("parents", &self.parents.len())
            .field("sort", &self.sort)
            .field("limit", &self.limit)
            .finish()
    }
}

/// Children grouped by parent, as [`Children`] returns them. A child that references several
/// of the parents (an array of references) is listed under each of them.
pub struct ChildrenOf<P: Model, C> {
    docs: Vec<C>,
    by_parent: HashMap<IdKey, Vec<usize>>,
    _parent: std::marker::PhantomData<fn() -> P>,
}

impl<P: Model, C: fmt::Debug> fmt::Debug for ChildrenOf<P, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildrenOf")
            .field("parents", &self.by_parent.len())
            .finish()
    }
}

fn key_of<P: Model>(parent: &P) -> Option<IdKey> {
    let id = parent.document_id()?;
    crate::path::encode_value(id).ok().map(|b| IdKey::of(&b))
}

impl<P: Model, C> ChildrenOf<P, C> {
    /// The children of `parent`, in the requested order (empty when it has none).
    pub fn of(&self, parent: &P) -> Vec<&C> {
        self.of_key(key_of(parent))
    }

    /// The children of the parent with this `_id`, in the requested order (empty when it has
    /// none, or when the id cannot be encoded): for children loaded with
    /// [`Odm::children_of_ids`].
    pub fn of_id(&self, id: impl crate::path::Value<P::Id>) -> Vec<&C> {
        self.of_key(id.to_bson().ok().map(|b| IdKey::of(&b)))
    }

    fn of_key(&self, key: Option<IdKey>) -> Vec<&C> {
        key.and_then(|k| self.by_parent.get(&k))
            .map(|ix| ix.iter().map(|i| &self.docs[*i]).collect())
            .unwrap_or_default()
    }

    /// Number of (parent, child) pairs loaded, over all parents.
    pub fn total(&self) -> usize {
        self.by_parent.values().map(Vec::len).sum()
    }

    /// Every child loaded, each once.
    pub fn into_children(self) -> Vec<C> {
        self.docs
    }

    fn add(&mut self, keys: Vec<IdKey>, child: C) {
        if keys.is_empty() {
            return;
        }
        let i = self.docs.len();
        self.docs.push(child);
        for k in keys {
            self.by_parent.entry(k).or_default().push(i);
        }
    }
}

impl<'a, C: Model, P: Model> Children<'a, C, P> {
    pub(crate) fn new<W>(odm: &'a Odm, link: &RefPath<C, W, P>, parents: &[P]) -> Self {
        Self::from_ids(
            odm,
            link,
            parents
                .iter()
                .filter_map(|p| p.document_id().map(crate::path::encode_value)),
        )
    }

    /// The children of the parents with these ids (a caller that holds ids, or a projection
    /// of the parents, need not load whole parents).
    pub(crate) fn of_ids<W>(
        odm: &'a Odm,
        link: &RefPath<C, W, P>,
        ids: impl IntoIterator<Item = impl crate::path::Value<P::Id>>,
    ) -> Self {
        Self::from_ids(odm, link, ids.into_iter().map(|id| id.to_bson()))
    }

    fn from_ids<W, E: fmt::Display>(
        odm: &'a Odm,
        link: &RefPath<C, W, P>,
        parents: impl Iterator<Item = std::result::Result<Bson, E>>,
    ) -> Self {
        let mut seen = std::collections::HashSet::new();
        let mut ids = Vec::new();
        let mut error = None;
        for id in parents {
            match id {
                Ok(id) => {
                    if seen.insert(IdKey::of(&id)) {
                        ids.push(id);
                    }
                }
                Err(e) => {
                    error.get_or_insert(Error::Encode {
                        collection: P::COLLECTION.to_owned(),
                        what: "parent id".to_owned(),
                        message: e.to_string(),
                    });
                }
            }
        }
        Children {
            odm,
            path: link.path().to_owned(),
            slots: link.slots,
            many: link.many,
            parents: ids,
            error,
            filter: None,
            sort: None,
            limit: None,
            session: None,
        }
    }

    /// Only children matching `filter`.
    pub fn filter(mut self, filter: Filter<C>) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Order of each parent's children (e.g. newest first: `LogMsg::time().desc()`).
    pub fn sort(mut self, sort: Sort<C>) -> Self {
        self.sort = Some(sort.into_document());
        self
    }

    /// At most `n` children per parent.
    pub fn limit_per_parent(mut self, n: u32) -> Self {
        self.limit = Some(n);
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    fn match_stage(&self, parents: &[Bson]) -> Result<Document> {
        let by_parent = crate::literal::is_in(&self.path, parents.to_vec());
        let filter = match &self.filter {
            Some(f) => doc! { "$and": [by_parent, f.clone().into_document(C::COLLECTION)?] },
            None => by_parent,
        };
        Ok(match C::entry().kind {
            Some(kind) => kind.restrict(filter),
            None => filter,
        })
    }

    async fn run(mut self) -> Result<ChildrenOf<P, C>> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let mut out = ChildrenOf {
            docs: Vec::new(),
            by_parent: HashMap::new(),
            _parent: std::marker::PhantomData,
        };
        if self.parents.is_empty() {
            return Ok(out);
        }
        let coll = self
            .odm
            .database()
            .collection::<RawDocumentBuf>(C::COLLECTION);
        // The pipeline of many-references repeats the parents' ids: half the budget each.
        let budget = match (self.limit, self.many) {
            (Some(_), true) => crate::batch::MAX_IDS_BYTES / 2,
            _ => crate::batch::MAX_IDS_BYTES,
        };
        let chunks =
            crate::batch::chunks_within(self.parents.clone(), budget, crate::batch::MAX_IDS);
        for chunk in chunks {
            let wanted: std::collections::HashSet<IdKey> = chunk.iter().map(IdKey::of).collect();
            self.run_chunk(&coll, &chunk, &wanted, &mut out).await?;
        }
        Ok(out)
    }

    /// The children of one chunk of parents: one `find` (or `aggregate` with a limit).
    async fn run_chunk(
        &mut self,
        coll: &mongodb::Collection<RawDocumentBuf>,
        parents: &[Bson],
        wanted: &std::collections::HashSet<IdKey>,
        out: &mut ChildrenOf<P, C>,
    ) -> Result<()> {
        match self.limit {
            None => {
                let mut options = FindOptions::default();
                options.sort = self.sort.clone();
                let children: Vec<C> = crate::engine::find_decoded::<C, C>(
                    self.odm,
                    self.match_stage(parents)?,
                    options,
                    self.session.as_deref_mut(),
                )
                .await?;
                for mut child in children {
                    let keys = parent_keys(self.slots, &mut child, wanted)?;
                    out.add(keys, child);
                }
            }
            Some(n) => {
                let pipeline = self.pipeline(n, parents)?;
                let action = coll.aggregate(pipeline);
                let mut groups: Vec<RawDocumentBuf> = Vec::new();
                match self.session.as_deref_mut() {
                    None => {
                        let mut cursor = action.await.map_err(Odm::driver_error::<C>)?;
                        while cursor.advance().await.map_err(Odm::driver_error::<C>)? {
                            groups.push(cursor.current().to_owned());
                        }
                    }
                    Some(s) => {
                        let mut cursor = action
                            .session(&mut *s)
                            .await
                            .map_err(Odm::driver_error::<C>)?;
                        while cursor.advance(s).await.map_err(Odm::driver_error::<C>)? {
                            groups.push(cursor.current().to_owned());
                        }
                    }
                }
                for group in groups {
                    let key = group
                        .get("_id")
                        .ok()
                        .flatten()
                        .and_then(|v| Bson::try_from(v).ok())
                        .map(|b| IdKey::of(&b));
                    let Some(key) = key else { continue };
                    let docs = group.get_array("docs").map_err(|e| Error::Encode {
                        collection: C::COLLECTION.to_owned(),
                        what: "children group".to_owned(),
                        message: e.to_string(),
                    })?;
                    for item in docs {
                        if let Ok(bson::RawBsonRef::Document(d)) = item {
                            out.add(
                                vec![key.clone()],
                                decode::<C>(&crate::decode::Reading::of::<C>(self.odm), d)?,
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `$match` the parents' children, then keep the first `n` of each parent's group.
    fn pipeline(&self, n: u32, parents: &[Bson]) -> Result<Vec<Document>> {
        let mut stages = vec![doc! { "$match": self.match_stage(parents)? }];
        let group_key = if self.many {
            // A child referencing several parents counts once for each of them.
            stages.push(doc! { "$addFields": { "__odm_parent": format!("${}", self.path) } });
            stages.push(doc! { "$unwind": "$__odm_parent" });
            stages.push(doc! { "$match": crate::literal::is_in("__odm_parent", parents.to_vec()) });
            "$__odm_parent".to_owned()
        } else {
            format!("${}", self.path)
        };
        let take = match &self.sort {
            Some(sort) => {
                doc! { "$topN": { "n": i64::from(n), "sortBy": sort.clone(), "output": "$$ROOT" } }
            }
            None => doc! { "$firstN": { "n": i64::from(n), "input": "$$ROOT" } },
        };
        stages.push(doc! { "$group": { "_id": group_key, "docs": take } });
        Ok(stages)
    }
}

fn parent_keys<C: Model, P: Model>(
    slots: fn(&mut C) -> RefSlots<'_, P>,
    child: &mut C,
    wanted: &std::collections::HashSet<IdKey>,
) -> Result<Vec<IdKey>> {
    let key = |r: &crate::Ref<P>| -> Result<IdKey> {
        crate::path::encode_value(r.id())
            .map(|b| IdKey::of(&b))
            .map_err(|e| Error::Encode {
                collection: C::COLLECTION.to_owned(),
                what: "parent reference".to_owned(),
                message: e.to_string(),
            })
    };
    let keys = match slots(child) {
        RefSlots::One(r) => vec![key(r)?],
        RefSlots::Optional(Some(r)) => vec![key(r)?],
        RefSlots::Optional(None) => vec![],
        RefSlots::Many(v) => v.iter().map(key).collect::<Result<_>>()?,
        RefSlots::Maybe(r) => r.iter().map(|r| key(r)).collect::<Result<_>>()?,
        RefSlots::Each(v) => v.iter().map(|r| key(r)).collect::<Result<_>>()?,
    };
    Ok(keys.into_iter().filter(|k| wanted.contains(k)).collect())
}

impl<'a, C: Model, P: Model> std::future::IntoFuture for Children<'a, C, P> {
    type Output = Result<ChildrenOf<P, C>>;
    type IntoFuture = super::engine::BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("children", C::COLLECTION);
        crate::trace::boxed(span, self.run(), |_| None)
    }
}
