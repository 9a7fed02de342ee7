//! The subset pattern: one entity split over two collections sharing one `_id`, the fields a
//! listing shows in the main model (`movies`) and the rest in the details (`movie_details`).
//!
//! `#[odm(subset_of = "Movie")]` on the details model declares the pair (it implements
//! [`Subset`]); [`Odm::subset`] gives the pair's operations, which write both sides together:
//!
//! - in a transaction when the deployment has them ([`TransactionMode::Auto`], the default),
//!   retried as a whole on transient errors: both sides land, or neither;
//! - else in a fixed order chosen so that an interruption leaves only details without their
//!   main document, which no listing shows: an insert writes the details first, then the main
//!   documents; a delete removes the main documents first, then the details.
//!   [`SubsetPair::verify`] finds such orphans and [`SubsetPair::repair`] deletes them.

mod follows;
mod verify;

pub(crate) use follows::SubsetFollow;
pub(crate) use verify::repair_by_name;
pub use verify::SubsetReport;

use std::collections::HashMap;

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use crate::document::IdKey;
use crate::transaction::TransactionMode;
use crate::{Error, Filter, Model, Odm, Result};

pub use crate::rules::Subset;

impl Odm {
    /// The operations of the subset pair whose details model is `D` (see [`SubsetPair`]).
    /// Sends nothing.
    pub fn subset<D: Subset>(&self) -> SubsetPair<'_, D> {
        SubsetPair {
            odm: self,
            mode: TransactionMode::Auto,
            _details: std::marker::PhantomData,
        }
    }
}

/// The operations of one subset pair, returned by [`Odm::subset`].
#[derive(Debug)]
#[must_use = "a subset pair does nothing until one of its operations is awaited"]
pub struct SubsetPair<'a, D> {
    odm: &'a Odm,
    mode: TransactionMode,
    _details: std::marker::PhantomData<fn() -> D>,
}

impl<D> Clone for SubsetPair<'_, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D> Copy for SubsetPair<'_, D> {}

/// The `_id` of a document as stored.
fn stored_id<T: Model>(doc: &T) -> Result<Option<Bson>> {
    doc.document_id()
        .map(crate::path::encode_value)
        .transpose()
        .map_err(|e| Error::Encode {
            collection: T::COLLECTION.to_owned(),
            what: "`_id`".to_owned(),
            message: e.to_string(),
        })
}

impl<'a, D: Subset> SubsetPair<'a, D> {
    /// Whether the writes of both sides run in one transaction: [`TransactionMode::Auto`] (the
    /// default) when the deployment supports them; [`TransactionMode::Never`] for the fixed
    /// order (see the [module](self)); [`TransactionMode::Always`] fails on a standalone
    /// server.
    pub fn transaction(mut self, mode: TransactionMode) -> Self {
        self.mode = mode;
        self
    }

    async fn in_transaction(&self) -> Result<bool> {
        Ok(match self.mode {
            TransactionMode::Never => false,
            TransactionMode::Always => true,
            TransactionMode::Auto => self.odm.supports_transactions().await?,
        })
    }

    /// Inserts one main document and its details, which must hold the same `_id` (else
    /// [`Error::SubsetMismatch`], before anything is sent). See [`SubsetPair::insert_many`]
    /// for the commands.
    pub async fn insert(&self, main: &D::Main, details: &D) -> Result<()> {
        self.insert_many(std::slice::from_ref(main), std::slice::from_ref(details))
            .await
    }

    /// Inserts main documents and their details, `details[i]` completing `mains[i]` (same
    /// `_id`, else [`Error::SubsetMismatch`] before anything is sent).
    ///
    /// Commands: one `insert` into the details' collection, then one into the main
    /// collection (each split by the driver past 100,000 documents or 48 MB), plus what
    /// inserting either model sends anyway (copies it takes, latest-N pushes). In a
    /// transaction when the [mode](SubsetPair::transaction) says so (`startTransaction` rides
    /// on the first insert, then `commitTransaction`). Without one, when the main insert fails
    /// (a duplicate `_id`), one `find` of the main ids and one `delete` take back the details
    /// whose main document is not there, and the insert's error is returned.
    pub async fn insert_many(&self, mains: &[D::Main], details: &[D]) -> Result<()> {
        let ids = paired_ids(mains, details)?;
        if mains.is_empty() {
            return Ok(());
        }
        if self.in_transaction().await? {
            return crate::transaction::in_transaction(
                self.odm,
                &(mains, details),
                |odm, s, (m, d)| {
                    Box::pin(async move {
                        odm.insert_many(d.iter()).session(s).await?;
                        odm.insert_many(m.iter()).session(s).await?;
                        Ok(())
                    })
                },
            )
            .await;
        }
        // Details first: an interruption leaves details no listing shows, never a main
        // document without its details.
        self.odm.insert_many(details.iter()).await?;
        if let Err(e) = self.odm.insert_many(mains.iter()).await {
            self.take_back_details(ids).await?;
            return Err(e);
        }
        Ok(())
    }

    /// After a failed main insert outside a transaction: deletes the details, among `ids`,
    /// whose main document is missing (one `find`, one `delete`).
    async fn take_back_details(&self, ids: Vec<Bson>) -> Result<()> {
        let present = self.main_ids_in(ids.clone(), None).await?;
        let missing: Vec<Bson> = ids
            .into_iter()
            .filter(|id| !present.contains(&IdKey::of(id)))
            .collect();
        if !missing.is_empty() {
            self.delete_details(missing, None).await?;
        }
        Ok(())
    }

    /// The ids among `ids` that the main collection holds: one `find` projecting `_id`.
    async fn main_ids_in(
        &self,
        ids: Vec<Bson>,
        session: Option<&mut ClientSession>,
    ) -> Result<Vec<IdKey>> {
        let options = FindOptions::builder().projection(doc! { "_id": 1 }).build();
        let found = crate::engine::find_documents(
            self.odm,
            <D::Main as Model>::COLLECTION,
            crate::literal::is_in("_id", ids),
            options,
            session,
        )
        .await?;
        Ok(found
            .iter()
            .filter_map(|d| d.get("_id"))
            .map(IdKey::of)
            .collect())
    }

    async fn delete_details(
        &self,
        ids: Vec<Bson>,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let action = self
            .odm
            .delete_many(Filter::<D>::raw(crate::literal::is_in("_id", ids)));
        crate::engine::send!(action, session)
    }

    /// Deletes the main documents matching `filter` and their details; returns how many main
    /// documents were deleted.
    ///
    /// Commands: one `find` of the matching main ids (projecting `_id`, and the main model's
    /// shard key, which each chunk's delete then names), then per
    /// [chunk](crate::batch) of ids one `delete` of the main documents followed by one of the
    /// details (through the ODM's deletes, so the delete rules of either model apply). In a
    /// transaction when the [mode](SubsetPair::transaction) says so; else in this order, so
    /// that an interruption leaves only details without their main document
    /// ([`SubsetPair::repair`] deletes them).
    pub async fn delete(&self, filter: Filter<D::Main>) -> Result<u64> {
        let filter = filter.into_document(<D::Main as Model>::COLLECTION)?;
        if self.in_transaction().await? {
            return crate::transaction::in_transaction(
                self.odm,
                &(*self, filter),
                |_, s, (me, f)| Box::pin(me.delete_in(f.clone(), Some(s))),
            )
            .await;
        }
        self.delete_in(filter, None).await
    }

    async fn delete_in(
        &self,
        filter: Document,
        mut session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        // The main documents' shard key is read with their ids, to route the deletes.
        let key = crate::catalog::KeyCarrier::new(<D::Main as Model>::entry().shard_key);
        let mut projection = doc! { "_id": 1 };
        key.project(&mut projection);
        let options = FindOptions::builder().projection(projection).build();
        let found = crate::engine::find_documents(
            self.odm,
            <D::Main as Model>::COLLECTION,
            filter,
            options,
            session.as_deref_mut(),
        )
        .await?;
        let by_id: HashMap<IdKey, &Document> = found
            .iter()
            .filter_map(|d| Some((IdKey::of(d.get("_id")?), d)))
            .collect();
        let ids: Vec<Bson> = found.iter().filter_map(|d| d.get("_id")).cloned().collect();
        let mut deleted = 0;
        for chunk in crate::batch::chunks_of(&ids) {
            let mut mains = crate::literal::is_in("_id", chunk.clone());
            let docs = chunk
                .iter()
                .filter_map(|id| by_id.get(&IdKey::of(id)).copied());
            key.restrict(&mut mains, docs);
            let mains = Filter::<D::Main>::raw(mains);
            let action = self.odm.delete_many(mains);
            deleted += crate::engine::send!(action, session.as_deref_mut())?;
            self.delete_details(chunk, session.as_deref_mut()).await?;
        }
        Ok(deleted)
    }

    /// The details of each of `mains`, in their order (`None` where a main document has no
    /// details, or no `_id`).
    ///
    /// Commands: one `find {_id: {$in: ids}}` on the details' collection per
    /// [chunk](crate::batch) of distinct ids (one for up to tens of thousands of ids), plus a
    /// `getMore` per further batch of the cursor; nothing for an empty list. A stored details
    /// document that does not decode is [`Error::Decode`] naming its collection, `_id` and
    /// field.
    pub async fn details_of(&self, mains: &[D::Main]) -> Result<Vec<Option<D>>> {
        let mut ids: Vec<Option<Bson>> = Vec::with_capacity(mains.len());
        let mut distinct: Vec<Bson> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for main in mains {
            let id = stored_id(main)?;
            if let Some(id) = &id {
                if seen.insert(IdKey::of(id)) {
                    distinct.push(id.clone());
                }
            }
            ids.push(id);
        }
        let mut found: HashMap<IdKey, D> = HashMap::new();
        for chunk in crate::batch::chunks_of(&distinct) {
            let docs = self
                .odm
                .find(Filter::<D>::raw(crate::literal::is_in("_id", chunk)))
                .await?;
            for d in docs {
                if let Some(id) = stored_id(&d)? {
                    found.insert(IdKey::of(&id), d);
                }
            }
        }
        // A main document listed twice gets its details at its first place only: `D` need
        // not be `Clone`.
        Ok(ids
            .iter()
            .map(|id| id.as_ref().and_then(|id| found.remove(&IdKey::of(id))))
            .collect())
    }
}

/// The `_id`s of the pairs, checked equal side by side.
fn paired_ids<M: Model, D: Model>(mains: &[M], details: &[D]) -> Result<Vec<Bson>> {
    let mismatch = |id: Option<&Bson>, detail: String| Error::SubsetMismatch {
        collection: D::COLLECTION.to_owned(),
        id: crate::error::show_id(id),
        detail,
    };
    if mains.len() != details.len() {
        return Err(mismatch(
            None,
            format!(
                "{} `{}` documents but {} details: give one details document per main document, in the same order; nothing was written",
                mains.len(),
                M::COLLECTION,
                details.len()
            ),
        ));
    }
    let mut ids = Vec::with_capacity(mains.len());
    for (main, details) in mains.iter().zip(details) {
        let (m, d) = (stored_id(main)?, stored_id(details)?);
        match (m, d) {
            (Some(m), Some(d)) if IdKey::of(&m) == IdKey::of(&d) => ids.push(m),
            (m, d) => {
                return Err(mismatch(
                    d.as_ref(),
                    format!(
                        "its main document in `{}` has `_id` {}: both sides of a subset pair hold the same `_id`; nothing was written",
                        M::COLLECTION,
                        m.map_or_else(|| "unset".to_owned(), |m| m.to_string())
                    ),
                ));
            }
        }
    }
    Ok(ids)
}
