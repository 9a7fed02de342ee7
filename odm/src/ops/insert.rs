//! Inserting documents: `insert_one` and `insert_many`, with the copies they take and the
//! latest-N arrays they feed.

use bson::{Bson, Document, RawDocumentBuf};
use mongodb::options::InsertManyOptions;
use mongodb::ClientSession;

use super::encode::encode_document;
use super::into_future;
use crate::{Error, Model, Odm, Result};

/// Inserts encoded documents, taking the copies they hold first and pushing summaries of
/// them onto their parents after (see [`crate::denormalize`]). Returns how many were sent.
///
/// Commands: one `find` per source collection the documents copy from (none when they copy
/// nothing), one `insert` (split by the driver past 100,000 documents or 48 MB), then one
/// `update` per parent keeping the latest of these documents; outside a session, one more
/// `find` per source collection re-reading the sources copied (and, only when a source changed
/// meanwhile, one `update` per copy of it correcting these documents, then another `find`, see
/// `denormalize::settle`); inside one, one `update` per
/// source collection before its `find`, claiming the sources so that a concurrent delete of one
/// conflicts (see [`crate::denormalize`]).
async fn insert_raw<T: Model>(
    odm: &Odm,
    mut raws: Vec<RawDocumentBuf>,
    ordered: bool,
    mut session: Option<&mut ClientSession>,
) -> Result<usize> {
    let encode_error = |e: bson::error::Error| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document".to_owned(),
        message: e.to_string(),
    };
    let copies_in = odm.catalog().copies_into(T::COLLECTION);
    let latest: Vec<_> = odm
        .catalog()
        .copies_from(T::COLLECTION)
        .iter()
        .filter(|c| matches!(c.kind, crate::schema::CopyKind::Latest { .. }))
        .cloned()
        .collect();
    let in_session = session.is_some();
    let mut taken = crate::denormalize::Taken::default();
    let mut docs: Vec<Document> = Vec::new();
    if !copies_in.is_empty() || !latest.is_empty() {
        docs = raws
            .iter()
            .map(|r| Document::try_from(r.as_ref()).map_err(encode_error))
            .collect::<Result<_>>()?;
    }
    if !copies_in.is_empty() {
        // The id the driver would give a document without one, given first: its copies are
        // settled by id.
        for d in docs.iter_mut().filter(|d| !d.contains_key("_id")) {
            let mut with_id = bson::doc! { "_id": bson::oid::ObjectId::new() };
            with_id.extend(std::mem::take(d));
            *d = with_id;
        }
        // Boxed, like every follow-up: a plain insert awaits a future the size of the driver's.
        taken = Box::pin(crate::denormalize::fill_copies(
            odm,
            copies_in,
            T::SHARD_KEY,
            &mut docs,
            session.as_deref_mut(),
        ))
        .await?;
        raws = docs
            .iter()
            .map(|d| RawDocumentBuf::try_from(d).map_err(encode_error))
            .collect::<Result<_>>()?;
    }
    let n = raws.len();
    let first = raws
        .first()
        .and_then(|r| r.get("_id").ok().flatten())
        .and_then(|v| Bson::try_from(v).ok());
    let target = || match n {
        1 => crate::error::show_id(first.as_ref()),
        n => format!(
            "{n} documents from {}",
            crate::error::show_id(first.as_ref())
        ),
    };
    let coll = odm.raw_collection::<T>();
    if n == 1 {
        let action = coll.insert_one(raws.pop().expect("one document"));
        crate::engine::send!(action, session.as_deref_mut()).map(|_| ())
    } else {
        let options = InsertManyOptions::builder().ordered(ordered).build();
        let action = coll.insert_many(raws).with_options(options);
        crate::engine::send!(action, session.as_deref_mut()).map(|_| ())
    }
    .map_err(|e| Error::from_write(T::COLLECTION, target, e))?;
    if !latest.is_empty() {
        let push = crate::denormalize::push_latest(odm, &latest, &docs, session);
        Box::pin(crate::trace::step!("latest", T::COLLECTION, push)).await?;
    }
    if !in_session && !taken.is_empty() {
        Box::pin(taken.settle(odm)).await?;
    }
    Ok(n)
}

/// [`insert_raw`] as a tree's insert takes it, once it has filled the nodes' ancestors.
fn insert_boxed<'s, T: Model>(
    odm: &'s Odm,
    raws: Vec<RawDocumentBuf>,
    ordered: bool,
    session: Option<&'s mut ClientSession>,
) -> crate::engine::BoxFuture<'s, Result<usize>> {
    Box::pin(insert_raw::<T>(odm, raws, ordered, session))
}

/// Builder returned by [`Odm::insert_one`]; resolves to the document's id. Sends one `insert`
/// (for a tree's node, see [`crate::tree`]: its ancestors are read from its parent first).
#[must_use = "the insert runs when awaited"]
#[derive(Debug)]
pub struct InsertOne<'a, T> {
    odm: &'a Odm,
    doc: &'a T,
    session: Option<&'a mut ClientSession>,
}

impl<'a, T: Model> InsertOne<'a, T> {
    pub(crate) fn new(odm: &'a Odm, doc: &'a T) -> Self {
        InsertOne {
            odm,
            doc,
            session: None,
        }
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<T::Id> {
        let (mut raw, id) = encode_document(self.doc)?;
        crate::versioning::stamp_insert(self.doc, &mut raw)?;
        if let Some(tree) = T::TREE {
            Box::pin(crate::tree::insert_nodes::<T>(
                self.odm,
                tree,
                vec![raw],
                true,
                self.session,
                insert_boxed::<T>,
            ))
            .await?;
            return Ok(id);
        }
        let ids = insert_raw::<T>(self.odm, vec![raw], true, self.session).await?;
        debug_assert_eq!(ids, 1);
        Ok(id)
    }
}

into_future!(InsertOne => T::Id, "insert_one", |_: &T::Id| Some(1));

/// Builder returned by [`Odm::insert_many`]; resolves to the ids, in order.
///
/// Sends one `insert` per 100,000 documents or 48 MB; none for an empty list. Ordered by
/// default: the first failure stops the rest.
#[must_use = "the insert runs when awaited"]
#[derive(Debug)]
pub struct InsertMany<'a, T> {
    odm: &'a Odm,
    docs: Vec<&'a T>,
    ordered: bool,
    session: Option<&'a mut ClientSession>,
}

impl<'a, T: Model> InsertMany<'a, T> {
    pub(crate) fn new(odm: &'a Odm, docs: Vec<&'a T>) -> Self {
        InsertMany {
            odm,
            docs,
            ordered: true,
            session: None,
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

    async fn run(self) -> Result<Vec<T::Id>> {
        if self.docs.is_empty() {
            return Ok(Vec::new());
        }
        let mut raws = Vec::with_capacity(self.docs.len());
        let mut ids = Vec::with_capacity(self.docs.len());
        for doc in &self.docs {
            let (mut raw, id) = encode_document(*doc)?;
            crate::versioning::stamp_insert(*doc, &mut raw)?;
            raws.push(raw);
            ids.push(id);
        }
        if let Some(tree) = T::TREE {
            crate::tree::insert_nodes::<T>(
                self.odm,
                tree,
                raws,
                self.ordered,
                self.session,
                insert_boxed::<T>,
            )
            .await?;
            return Ok(ids);
        }
        insert_raw::<T>(self.odm, raws, self.ordered, self.session).await?;
        Ok(ids)
    }
}

into_future!(InsertMany => Vec<T::Id>, "insert_many", |v: &Vec<T::Id>| Some(v.len() as u64));
