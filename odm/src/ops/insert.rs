//! Inserting documents: `insert_one` and `insert_many`, with the copies they take and the
//! latest-N arrays they feed.

use bson::RawDocumentBuf;
use mongodb::options::WriteConcern;
use mongodb::ClientSession;

use super::encode::{as_serialized, encode_document};
use super::into_future;
use super::InsertOneFuture;
use crate::engine::write::InsertOneSending;
use crate::engine::{BoxFuture, InsertCall, Sending};
use crate::pipeline::Route;
use crate::{Model, Odm, Result};

/// Offers the insert of encoded documents to the maintainers (see [`crate::pipeline`]), and
/// sends the plain `insert` when none takes it. Returns how many documents were sent.
///
/// Commands: one `insert` (split by the driver past 100,000 documents or 48 MB); for documents
/// that copy from others, one `find` per source collection first (and after, see
/// [`crate::denormalize`]); for a source of latest-N arrays, one `update` per parent after it;
/// for a tree's nodes, see [`crate::tree`]; for the children of a two-way reference, one
/// `update` per parent they name, and `commitTransaction` where the deployment has transactions
/// (see [`Odm::reassign`](crate::Odm::reassign) and the guide's two-way references).
fn insert_raw<'a, T: Model>(
    odm: &'a Odm,
    docs: &'a [&'a T],
    raws: Vec<RawDocumentBuf>,
    ordered: bool,
    session: Option<&'a mut ClientSession>,
    extras: Option<Box<crate::engine::Extras>>,
) -> BoxFuture<'a, Result<usize>> {
    crate::pipeline::insert::<T>(InsertCall {
        odm,
        docs,
        raws,
        ordered,
        session,
        extras,
    })
}

/// Builder returned by [`Odm::insert_one`]; resolves to the document's id. Sends one `insert`
/// (for a tree's node, see [`crate::tree`]: its ancestors are read from its parent first; for
/// copies and latest-N arrays, see [`crate::denormalize`]).
#[must_use = "the insert runs when awaited"]
#[derive(Debug)]
pub struct InsertOne<'a, T> {
    odm: &'a Odm,
    doc: &'a T,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
    extras: Option<Box<crate::engine::Extras>>,
}

impl<'a, T: Model> InsertOne<'a, T> {
    pub(crate) fn new(odm: &'a Odm, doc: &'a T) -> Self {
        InsertOne {
            odm,
            doc,
            session: None,
            concern: None,
            extras: None,
        }
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The insert as one future. For a model no maintainer concerns, the plain `insert`, built
    /// here; otherwise offered to the maintainers, which read the typed document.
    fn start(mut self) -> InsertOneSending<'a, T::Id> {
        crate::engine::concerned!(return Sending::Boxed, self: InsertOne.start);
        let odm = self.odm;
        let slot = match crate::pipeline::route::<T>(odm) {
            Route::Plain(slot) if self.extras.is_none() => slot,
            // Options of its own: the command built with them, by the call.
            _ => return Sending::Boxed(Box::pin(self.run())),
        };
        // Sent as serde writes it: the driver serializes the struct itself, once.
        let typed = slot.and_then(|slot| odm.typed_collection::<T>(slot));
        if let (Some(id), Some(coll)) = (as_serialized(self.doc), typed) {
            return crate::engine::write::insert_typed::<T>(
                coll,
                self.doc,
                id.clone(),
                self.session,
            );
        }
        match encode_document(self.doc) {
            Ok((raw, id)) => {
                let coll = slot.map(|slot| odm.slot_collection(slot, T::COLLECTION));
                crate::engine::write::insert_one::<T>(odm, raw, id, self.session, coll)
            }
            Err(e) => Sending::failed(e),
        }
    }

    async fn run(self) -> Result<T::Id> {
        let (raw, id) = encode_document(self.doc)?;
        let n = insert_raw::<T>(
            self.odm,
            std::slice::from_ref(&self.doc),
            vec![raw],
            true,
            self.session,
            self.extras,
        )
        .await?;
        debug_assert_eq!(n, 1);
        Ok(id)
    }
}

crate::engine::write_options!(InsertOne, bypass);
crate::engine::write_options!(InsertMany, bypass);

into_future!(InsertOne => T::Id, "insert_one", |_: &T::Id| Some(1), start -> InsertOneFuture<'a, T>);

/// Builder returned by [`Odm::insert_many`]; resolves to the ids, in order.
///
/// Sends one `insert` per 100,000 documents or 48 MB; none for an empty list. Ordered by
/// default: the first failure stops the rest. The children of a two-way reference are added to
/// the arrays of the parents they name first: one `update` per distinct parent (`$addToSet`
/// with `$each`, room for all of them under the array's `max`), in one transaction with the
/// `insert` where the deployment has them; a full or missing parent refuses the whole batch
/// with nothing written.
#[must_use = "the insert runs when awaited"]
#[derive(Debug)]
pub struct InsertMany<'a, T> {
    odm: &'a Odm,
    docs: Vec<&'a T>,
    ordered: bool,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
    extras: Option<Box<crate::engine::Extras>>,
}

impl<'a, T: Model> InsertMany<'a, T> {
    pub(crate) fn new(odm: &'a Odm, docs: Vec<&'a T>) -> Self {
        InsertMany {
            odm,
            docs,
            ordered: true,
            session: None,
            concern: None,
            extras: None,
        }
    }

    /// Unordered: the server goes on after a failed document.
    pub fn unordered(mut self) -> Self {
        self.ordered = false;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(mut self) -> Result<Vec<T::Id>> {
        crate::engine::concerned!(return await, self: InsertMany.sent);
        self.sent().await
    }

    /// The write, on this builder's handle.
    async fn sent(self) -> Result<Vec<T::Id>> {
        if self.docs.is_empty() {
            return Ok(Vec::new());
        }
        let mut raws = Vec::with_capacity(self.docs.len());
        let mut ids = Vec::with_capacity(self.docs.len());
        for doc in &self.docs {
            let (raw, id) = encode_document(*doc)?;
            raws.push(raw);
            ids.push(id);
        }
        let (odm, docs, ordered) = (self.odm, &self.docs, self.ordered);
        insert_raw::<T>(odm, docs, raws, ordered, self.session, self.extras).await?;
        Ok(ids)
    }
}

into_future!(InsertMany => Vec<T::Id>, "insert_many", |v: &Vec<T::Id>| Some(v.len() as u64));
