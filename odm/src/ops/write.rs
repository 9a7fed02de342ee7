use bson::raw::{RawBsonRef, RawDocument};
use bson::{Bson, Document, RawDocumentBuf};
use mongodb::options::{InsertManyOptions, ReplaceOptions, UpdateOptions};
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::bounds::guards;
use super::into_future;
use crate::keys::check_document;
use crate::query::Filter;
use crate::update::Update;
use crate::{Error, Model, Odm, Result};

/// Encodes a model document for writing: keys checked, `_id` present (generated when the type
/// allows). Returns the document and its id.
pub(crate) fn encode_document<T: Model>(doc: &T) -> Result<(RawDocumentBuf, T::Id)> {
    let encode_error = |e: bson::error::Error| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document".to_owned(),
        message: e.to_string(),
    };
    if let Some((path, len, max)) = doc.bound_violation() {
        return Err(Error::BoundExceeded {
            collection: T::COLLECTION.to_owned(),
            path: path.to_owned(),
            max,
            documents: 1,
            detail: format!("the document holds {len} elements"),
        });
    }
    let mut raw = bson::serialize_to_raw_document_buf(doc).map_err(encode_error)?;
    check_document(T::COLLECTION, &raw)?;
    if let Some(kind) = T::KIND {
        store_kind::<T>(&mut raw, kind)?;
    }
    if let Some(v) = T::SCHEMA_VERSION {
        raw.append(bson::raw::cstr!("_v"), v.current as i32);
    }
    if let Some(key) = T::SHARD_KEY {
        crate::shard::fill_segment(T::COLLECTION, &mut raw, &key)?;
    }
    let has_id = matches!(raw.get("_id"), Ok(Some(v)) if !matches!(v, RawBsonRef::Null));
    if has_id {
        let id = doc
            .document_id()
            .cloned()
            .map_or_else(|| id_of::<T>(&raw), Ok)?;
        return Ok((raw, id));
    }
    let id = T::generate_id().ok_or_else(|| Error::MissingId {
        collection: T::COLLECTION.to_owned(),
    })?;
    // An `Option` id left empty: `_id` first, as the server would put it.
    let raw = with_id_first(&raw, &id).map_err(|message| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document".to_owned(),
        message,
    })?;
    Ok((raw, id))
}

/// `raw` with `_id: id` as its first element and the `_id` it held, if any (a null), left out:
/// spliced from the bytes, nothing decoded or serialized again but the id.
fn with_id_first<I: serde::Serialize>(
    raw: &RawDocumentBuf,
    id: &I,
) -> std::result::Result<RawDocumentBuf, String> {
    #[derive(serde::Serialize)]
    struct Head<'a, I> {
        #[serde(rename = "_id")]
        id: &'a I,
    }
    let mut out = bson::serialize_to_raw_document_buf(&Head { id })
        .map_err(|e| e.to_string())?
        .into_bytes();
    // The head's terminating null goes: the document's elements follow.
    out.pop();
    let bytes = raw.as_bytes();
    out.reserve(bytes.len());
    let mut elements = crate::keys::Elements::new(bytes);
    // Type byte, key, its null, value: everything from the type byte to the value's end.
    let mut at = 4;
    for element in elements.by_ref() {
        let (_, key, value) = element.ok_or("malformed document")?;
        let end = value.as_ptr() as usize - bytes.as_ptr() as usize + value.len();
        if key != b"_id" {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    if !elements.finished() {
        return Err("malformed document".to_owned());
    }
    out.push(0);
    let total = i32::try_from(out.len()).map_err(|_| "the document is too large".to_owned())?;
    out[..4].copy_from_slice(&total.to_le_bytes());
    RawDocumentBuf::from_bytes(out).map_err(|e| e.to_string())
}

/// A kind's document carries its discriminator: appended when the struct does not store it,
/// refused when it stores another value.
fn store_kind<T: Model>(raw: &mut RawDocumentBuf, kind: crate::kind::Kind) -> Result<()> {
    match raw.get(kind.field) {
        Ok(None) => {
            // The derive refuses a discriminator field name that is not a valid key.
            let key = <&bson::raw::CStr>::try_from(kind.field).map_err(|e| Error::Encode {
                collection: T::COLLECTION.to_owned(),
                what: "discriminator".to_owned(),
                message: e.to_string(),
            })?;
            raw.append(key, kind.value);
            Ok(())
        }
        Ok(Some(RawBsonRef::String(v))) if v == kind.value => Ok(()),
        other => Err(Error::Encode {
            collection: T::COLLECTION.to_owned(),
            what: "document".to_owned(),
            message: format!(
                "the document stores `{}: {:?}`, but it is the kind `{}: {:?}`",
                kind.field,
                other
                    .ok()
                    .flatten()
                    .and_then(|v| Bson::try_from(v).ok())
                    .unwrap_or(Bson::Null),
                kind.field,
                kind.value
            ),
        }),
    }
}

fn id_of<T: Model>(raw: &RawDocument) -> Result<T::Id> {
    let value = crate::decode::id_of(raw).unwrap_or(Bson::Null);
    bson::deserialize_from_bson(value).map_err(|e| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document id".to_owned(),
        message: e.to_string(),
    })
}

/// An update document, with the keys of every value it writes checked (typed updates only:
/// a raw update may carry modifiers such as `$each`).
pub(crate) fn checked_update<T>(collection: &str, update: Update<T>) -> Result<Document> {
    let raw = update.is_raw();
    let doc = update.into_document(collection)?;
    if !raw {
        for fields in doc.values() {
            if let Bson::Document(fields) = fields {
                for value in fields.values() {
                    // Only documents and arrays can hold keys to check.
                    if matches!(value, Bson::Document(_) | Bson::Array(_)) {
                        let wrapped = bson::doc! { "v": value.clone() };
                        let raw =
                            RawDocumentBuf::try_from(&wrapped).map_err(|e| Error::Encode {
                                collection: collection.to_owned(),
                                what: "update value".to_owned(),
                                message: e.to_string(),
                            })?;
                        check_document(collection, &raw)?;
                    }
                }
            }
        }
    }
    Ok(doc)
}

/// An update of `T` as it will be sent, with the copies it writes taken from their sources,
/// and what to do about copies once it has landed: the sources to re-read, and the latest-N
/// arrays to recompute. See [`UpdateOp`] for the commands.
pub(crate) async fn prepare_update<T: Model>(
    odm: &Odm,
    filter: &Document,
    update: Update<T>,
    mut session: Option<&mut ClientSession>,
) -> Result<(
    Document,
    crate::denormalize::Taken,
    crate::denormalize::LatestRefresh,
)> {
    let mut update = checked_update(T::COLLECTION, update)?;
    if let Some(tree) = T::TREE {
        crate::tree::refuse_tree_writes(T::COLLECTION, tree, &update)?;
    }
    // A raw update is refused on copies too: raw is for operators, not for writing copies.
    // The follow-up work is boxed, and only built when there is some: an update of a model
    // without copies awaits a future the size of the driver's.
    let taken = if crate::denormalize::copies_into(T::COLLECTION).is_empty() {
        crate::denormalize::Taken::default()
    } else {
        Box::pin(crate::denormalize::fill_update(
            odm,
            T::COLLECTION,
            crate::denormalize::Writes::of::<T>(),
            &mut update,
            true,
            session.as_deref_mut(),
        ))
        .await?
    };
    // The paths as sent, copies taken included: a latest-N array holding a copy this update
    // refills (through the reference it follows) is recomputed too.
    let mut latest = if crate::denormalize::copies_from(T::COLLECTION).is_empty() {
        crate::denormalize::LatestRefresh::default()
    } else {
        Box::pin(crate::denormalize::LatestRefresh::before(
            odm,
            T::COLLECTION,
            filter,
            &crate::denormalize::written_by(&update),
            session,
        ))
        .await?
    };
    if let Ok(set) = update.get_document("$set") {
        latest.add_written(set);
    }
    Ok((update, taken, latest))
}

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
    let copies_in = crate::denormalize::copies_into(T::COLLECTION);
    let latest: Vec<_> = crate::denormalize::copies_from(T::COLLECTION)
        .iter()
        .filter(|c| matches!(c.kind, crate::denormalize::CopyKind::Latest { .. }))
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
        crate::ops::send!(action, session.as_deref_mut()).map(|_| ())
    } else {
        let options = InsertManyOptions::builder().ordered(ordered).build();
        let action = coll.insert_many(raws).with_options(options);
        crate::ops::send!(action, session.as_deref_mut()).map(|_| ())
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
) -> crate::populate::BoxFuture<'s, Result<usize>> {
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

/// Builder returned by [`Odm::update_one`], [`Odm::update_many`] and [`Odm::update_by_id`].
/// Sends one `update`; resolves to the driver's `UpdateResult` (matched, modified, upserted id).
///
/// Bounded arrays: a whole array (or a `$each`) longer than its bound is refused before anything
/// is sent; a push is guarded in the filter, and one `aggregate` tells "full" from "not found"
/// when nothing matched. `update_many` with a push first counts the documents with room and the
/// full ones (two `aggregate`s) and refuses the whole update if any is full; documents that fill
/// up after the count are not grown and make it return [`Error::BoundExceeded`] with their
/// number, the others updated. A refused write is an [`Error::Write`] naming the filter.
///
/// Denormalized copies add commands (none when the model holds no copy and none is taken from
/// it):
/// - an update writing whole summaries or the reference a copy follows: one `find` per source
///   collection before the `update`, and the same `find` after it (outside a session; inside
///   one, a claiming `update` per source collection before the `find` instead);
/// - an update of a field other models copy: see [`UpdateOp::transaction`] (the update becomes
///   a `findAndModify`, then one `update` per copy and a re-reading `find`; a copy that is
///   itself copied adds one `find` and one `update` per copy of it, level after level);
/// - an update of a source of latest-N arrays touching their reference, a copied or a sort
///   field: one `find` of the parents before, then one `aggregate` and one `update` per parent.
///   When the deployment has transactions (and outside a session), the update and all of these
///   run in one transaction, retried on write conflicts, then `commitTransaction`: the summary
///   changes with its source or neither does (unless the update also cascades to other copies;
///   then the recomputation alone is in a transaction).
///
/// Each command that names a list of ids is sent once per [chunk](crate::batch) of ids (at most
/// 8 MiB of ids, 4 MiB when an array filter repeats them, and 100,000 ids), so that none passes
/// the server's 16 MB limit. A source value a copy's type cannot decode is never copied:
/// [`Error::Decode`](crate::Error::Decode) names the source, its `_id` and the field; the other
/// copies are still updated outside a transaction.
#[must_use = "the update runs when awaited"]
#[derive(Debug)]
pub struct UpdateOp<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    update: Update<T>,
    many: bool,
    upsert: bool,
    mode: crate::relations::TransactionMode,
    session: Option<&'a mut ClientSession>,
    /// `update_document` of a versioned model: the document's `_id` and the version it was
    /// loaded at, required in the filter.
    loaded: Option<(Bson, i64)>,
}

impl<'a, T: Model> UpdateOp<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>, update: Update<T>, many: bool) -> Self {
        UpdateOp {
            odm,
            filter,
            update,
            many,
            upsert: false,
            mode: crate::relations::TransactionMode::Never,
            session: None,
            loaded: None,
        }
    }

    /// Whether an update that cascades to denormalized copies runs in a transaction. By
    /// default ([`TransactionMode::Never`](crate::TransactionMode::Never)) it does not: the
    /// cascade re-reads the sources until the copies match them, which scales to any number of
    /// copies; `Auto` runs it in one transaction when the deployment has them (falling back
    /// when it is too large for one), `Always` insists; either retries the transaction on write
    /// conflicts until [`Odm::retry_deadline`]. Without a transaction, a cascade that cannot
    /// catch up with concurrent updates by then is an [`Error::CascadeIncomplete`](crate::Error::CascadeIncomplete).
    /// See [`crate::denormalize`].
    pub fn transaction(mut self, mode: crate::relations::TransactionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Inserts a document built from the filter and the update when none matches. For a
    /// sharded model the filter must pin every field of the shard key with equality, or the
    /// update is refused with [`Error::ShardKeyMissing`] before anything is sent.
    pub fn upsert(mut self, yes: bool) -> Self {
        self.upsert = yes;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<UpdateResult> {
        let odm = self.odm;
        if self.session.is_none() && self.latest_in_transaction().await? {
            return Box::pin(self.run_with_latest()).await;
        }
        let in_session = self.session.is_some();
        let (result, taken, short) = self.write().await?;
        if !in_session && !taken.is_empty() {
            Box::pin(taken.settle(odm)).await?;
        }
        match short {
            Some(full) => Err(full),
            None => Ok(result),
        }
    }

    /// Whether this update changes latest-N arrays and nothing else the ODM maintains, on a
    /// deployment with transactions: then the write and the recomputation of the arrays run in
    /// one transaction ([`Self::run_with_latest`]). A source field nobody copies, or a model no
    /// latest-N array summarizes, answers at the first lookup.
    async fn latest_in_transaction(&self) -> Result<bool> {
        use crate::denormalize::{
            copies_from, copies_into, latest_touched, touched_by, written_by,
        };
        if copies_from(T::COLLECTION).is_empty() || !copies_into(T::COLLECTION).is_empty() {
            return Ok(false);
        }
        let update = self.update.as_document();
        if latest_touched(T::COLLECTION, &written_by(update)).is_empty()
            || !touched_by(T::COLLECTION, T::KIND, update).is_empty()
        {
            return Ok(false);
        }
        // What is refused before anything is sent stays so: no `hello` first.
        let base = super::model_filter(self.filter.clone())?;
        if let (true, Some(key)) = (self.upsert, T::SHARD_KEY) {
            crate::shard::check_upsert(T::COLLECTION, &base, &key, "upsert")?;
        }
        self.odm.supports_transactions().await
    }

    /// The update and the recomputation of the latest-N arrays it changes, in one transaction
    /// the ODM opens and retries on write conflicts: the summary changes with the source, or
    /// neither does. The same commands as outside a transaction, then `commitTransaction`.
    async fn run_with_latest(self) -> Result<UpdateResult> {
        let op = (
            self.filter,
            self.update,
            self.many,
            self.upsert,
            self.mode,
            self.loaded,
        );
        let (result, short) = crate::retry::in_transaction(self.odm, &op, |odm, session, op| {
            let (filter, update, many, upsert, mode, loaded) = op;
            let attempt = UpdateOp {
                odm,
                filter: filter.clone(),
                update: update.clone(),
                many: *many,
                upsert: *upsert,
                mode: *mode,
                session: Some(session),
                loaded: loaded.clone(),
            };
            Box::pin(async move {
                // Nothing is taken: the model holds no copies.
                let (result, _, short) = attempt.write().await?;
                Ok((result, short))
            })
        })
        .await?;
        match short {
            Some(full) => Err(full),
            None => Ok(result),
        }
    }

    /// The result, the copies to settle, and for a bounded `update_many` whose write matched
    /// fewer documents than had room when counted, the error saying so.
    async fn write(self) -> Result<(UpdateResult, crate::denormalize::Taken, Option<Error>)> {
        let mut base = super::model_filter(self.filter)?;
        crate::versioning::expect_version::<T>(&mut base, self.loaded.as_ref().map(|l| l.1));
        // The server could not tell which shard a new document belongs to.
        if let (true, Some(key)) = (self.upsert, T::SHARD_KEY) {
            crate::shard::check_upsert(T::COLLECTION, &base, &key, "upsert")?;
        }
        let guards =
            super::bounds::guards_for::<T>(self.update.as_document(), self.update.guards())?;
        let mut session = self.session;
        let array_filters = self.update.array_filters();
        let (mut update, taken, latest) =
            prepare_update(self.odm, &base, self.update, session.as_deref_mut()).await?;
        crate::versioning::stamp_update::<T>(&mut update, self.upsert)?;
        // After the copies are taken: a copy the update refills is cascaded to its own copies.
        let touched = crate::denormalize::touched_by(T::COLLECTION, T::KIND, &update);
        // The cascade re-sends the update in commands of its own, without array filters. No
        // copy is taken from below an array today, so this is a guard, not a path taken.
        if !touched.is_empty() && !array_filters.is_empty() {
            return Err(Error::Unsupported(format!(
                "this update of `{}` writes fields other models copy through filtered element paths (`$[e0]`), which the cascade does not follow; update those elements with `matched()` or `each()`",
                T::COLLECTION
            )));
        }
        let filter =
            crate::positional::filter_for_update(guards::guarded(base.clone(), &guards), &update);
        let mut with_room = None;
        if self.many && !guards.is_empty() {
            // Count the documents with room, then refuse the whole update, before writing, if
            // any is full: one that fills up after the count is found full by the check, one
            // that fills up after the check is missing from the update's matches: reported.
            with_room = Some(
                Box::pin(guards::count::<T>(
                    self.odm,
                    filter.clone(),
                    session.as_deref_mut(),
                ))
                .await?,
            );
            Box::pin(guards::refuse_full::<T>(
                self.odm,
                &base,
                &guards,
                session.as_deref_mut(),
            ))
            .await?;
        }
        let written = if !touched.is_empty() && !self.upsert {
            let cascade = crate::denormalize::cascade_update::<T>(
                self.odm,
                filter,
                update,
                touched,
                self.many,
                self.mode,
                session.as_deref_mut(),
            );
            // The copies' writes are the step `cascade`, traced inside: the source's own
            // write belongs to the operation.
            Box::pin(cascade).await
        } else {
            let coll = self.odm.raw_collection::<T>();
            // No options unless they say something: the statement is then the driver's own.
            let options = (self.upsert || !array_filters.is_empty()).then(|| {
                UpdateOptions::builder()
                    .upsert(self.upsert)
                    .array_filters((!array_filters.is_empty()).then_some(array_filters))
                    .build()
            });
            if self.many {
                let action = coll.update_many(filter, update).with_options(options);
                crate::ops::send!(action, session.as_deref_mut())
            } else {
                let action = coll.update_one(filter, update).with_options(options);
                crate::ops::send!(action, session.as_deref_mut())
            }
            // The filter is shown only when the write fails (formatting it costs more than
            // building the whole command).
            .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_filter(&base), e))
        };
        let missed = crate::versioning::missed(&written, self.upsert);
        if let (true, Some((id, expected))) = (missed, &self.loaded) {
            Box::pin(crate::versioning::check_conflict::<T>(
                self.odm,
                id,
                *expected,
                session.as_deref_mut(),
            ))
            .await?;
        }
        let result = written?;
        if result.matched_count == 0 && result.upserted_id.is_none() && !guards.is_empty() {
            Box::pin(guards::refuse_full::<T>(
                self.odm,
                &base,
                &guards,
                session.as_deref_mut(),
            ))
            .await?;
        }
        if latest.is_active() {
            Box::pin(latest.run(self.odm, session)).await?;
        }
        let short = with_room
            .filter(|n| result.matched_count < *n)
            .map(|n| {
                let mut guard = guards[0].clone();
                guard.path = guards.iter().map(|g| g.path.as_str()).collect::<Vec<_>>().join(", ");
                let detail = format!(
                    "{} document(s) were updated; the others changed (or stopped matching) between the count and the update",
                    result.matched_count
                );
                guards::refused::<T>(&guard, n - result.matched_count, detail)
            });
        Ok((result, taken, short))
    }
}

into_future!(UpdateOp => UpdateResult, "update", |r: &UpdateResult| Some(r.modified_count));

/// Builder returned by [`Odm::replace_one`]. Sends one `update` (a replacement, by `_id`; for
/// a sharded model by `_id` and the replacement's shard key values, so that it is routed to one
/// shard: a replacement that changes the key matches nothing).
///
/// When the model holds copies of other models, they are taken from their sources first, as on
/// insert (one `find` per source collection, and one more after the write outside a session;
/// inside one, a claiming `update` per source collection before the `find`);
/// its latest-N arrays are recomputed after it (one `aggregate`, one `update`; in one
/// transaction with the replacement, then `commitTransaction`, when nothing else copies from
/// the model, it holds no copies and the deployment has transactions).
/// When other models copy from this one, the replacement is one `findAndModify` returning the
/// copied fields as they were, followed by one `update` per copy whose fields changed (and, outside
/// a session, one `find` re-reading this document).
///
/// A model with `#[odm(created_at)]` keeps the stored value: when the struct holds another,
/// the replacement matches nothing, one `find` reads the stored value, and the replacement is
/// sent again with it (see [`crate::versioning`]).
#[must_use = "the replace runs when awaited"]
#[derive(Debug)]
pub struct Replace<'a, T> {
    odm: &'a Odm,
    doc: &'a T,
    upsert: bool,
    session: Option<&'a mut ClientSession>,
}

impl<'a, T: Model> Replace<'a, T> {
    pub(crate) fn new(odm: &'a Odm, doc: &'a T) -> Self {
        Replace {
            odm,
            doc,
            upsert: false,
            session: None,
        }
    }

    /// Inserts the document when no document has its id.
    pub fn upsert(mut self, yes: bool) -> Self {
        self.upsert = yes;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<UpdateResult> {
        if self.session.is_none() && Self::latest_in_transaction(self.odm).await? {
            // The replacement and the recomputation of the latest-N arrays it may change, in
            // one transaction retried on write conflicts: the same commands, then the commit.
            let upsert = self.upsert;
            let run = crate::retry::in_transaction(self.odm, self.doc, |odm, session, doc| {
                let attempt = Replace {
                    odm,
                    doc,
                    upsert,
                    session: Some(session),
                };
                Box::pin(attempt.write_keeping_created_at())
            });
            return Box::pin(run).await;
        }
        self.write_keeping_created_at().await
    }

    /// The replacement; when it missed because the struct's `created_at` is not the stored
    /// one, once more with the stored one (which a replacement never changes).
    async fn write_keeping_created_at(mut self) -> Result<UpdateResult> {
        let mut keep = None;
        loop {
            // A second attempt (with `keep`) never asks for a third.
            match self.write(keep.take()).await? {
                Written::Done(result) => return Ok(result),
                Written::Again(kept) => keep = Some(kept),
            }
        }
    }

    /// Whether a replacement changes latest-N arrays and nothing else the ODM maintains (this
    /// model holds no copies, and none but latest-N arrays copies from it), on a deployment
    /// with transactions.
    async fn latest_in_transaction(odm: &Odm) -> Result<bool> {
        use crate::denormalize::{copies_from, copies_into, CopyKind};
        let from = copies_from(T::COLLECTION);
        if from.is_empty()
            || !copies_into(T::COLLECTION).is_empty()
            || !from
                .iter()
                .all(|c| matches!(c.kind, CopyKind::Latest { .. }))
        {
            return Ok(false);
        }
        odm.supports_transactions().await
    }

    async fn write(&mut self, keep: Option<Bson>) -> Result<Written> {
        let first = keep.is_none();
        let id = self.doc.document_id().ok_or_else(|| Error::MissingId {
            collection: T::COLLECTION.to_owned(),
        })?;
        let mut filter = super::model_filter(T::id_field().eq(id))?;
        let (mut raw, _) = encode_document(self.doc)?;
        // Routed on a sharded cluster: the filter names the document's shard key.
        if let Some(key) = T::SHARD_KEY {
            crate::shard::pin_key(&mut filter, &raw, &key);
        }
        // A versioned document is written only over the version it was loaded at.
        let replacing = crate::versioning::stamp_replace(self.doc, &mut filter, &mut raw, keep)?;
        // A tree's node keeps its place: the replacement's parent and ancestors must be the
        // stored ones.
        let tree = match T::TREE {
            Some(tree) => {
                crate::tree::guard_replace(T::COLLECTION, tree, &mut filter, &raw, self.upsert)?;
                Some((tree, raw.clone()))
            }
            None => None,
        };
        let mut session = self.session.as_deref_mut();
        let in_session = session.is_some();
        let encode_error = |e: bson::error::Error| Error::Encode {
            collection: T::COLLECTION.to_owned(),
            what: "document".to_owned(),
            message: e.to_string(),
        };
        // The replacement's own copies are taken from their sources, as on insert.
        let copies_in = crate::denormalize::copies_into(T::COLLECTION);
        let mut taken = crate::denormalize::Taken::default();
        if !copies_in.is_empty() {
            let mut docs = [Document::try_from(raw.as_ref()).map_err(encode_error)?];
            taken = crate::denormalize::fill_copies(
                self.odm,
                copies_in,
                T::SHARD_KEY,
                &mut docs,
                session.as_deref_mut(),
            )
            .await?;
            raw = RawDocumentBuf::try_from(&docs[0]).map_err(encode_error)?;
        }
        // Copies taken from this document follow the replacement.
        let copies_from = crate::denormalize::copies_from(T::COLLECTION)
            .iter()
            .filter(|c| !matches!(c.kind, crate::denormalize::CopyKind::Latest { .. }))
            .cloned()
            .collect::<Vec<_>>();
        let mut latest = crate::denormalize::LatestRefresh::before(
            self.odm,
            T::COLLECTION,
            &filter,
            &[""],
            session.as_deref_mut(),
        )
        .await?;
        if latest.is_active() {
            latest.add_written(&Document::try_from(raw.as_ref()).map_err(encode_error)?);
        }
        let id = crate::decode::id_of(&raw).unwrap_or(Bson::Null);
        let written = if copies_from.is_empty() {
            let coll = self.odm.raw_collection::<T>();
            let options = ReplaceOptions::builder().upsert(self.upsert).build();
            let action = coll.replace_one(filter, raw).with_options(options);
            crate::ops::send!(action, session.as_deref_mut()).map_err(|e| {
                Error::from_write(T::COLLECTION, || crate::error::show_id(Some(&id)), e)
            })
        } else {
            let replacement = Document::try_from(raw.as_ref()).map_err(encode_error)?;
            let cascade = crate::denormalize::replace_source::<T>(
                self.odm,
                filter,
                replacement,
                self.upsert,
                copies_from,
                session.as_deref_mut(),
            );
            Box::pin(cascade).await
        };
        if crate::versioning::missed(&written, self.upsert) {
            let kept = crate::versioning::check_missed_replace::<T>(
                self.odm,
                self.doc.stamps().version,
                &replacing,
                &id,
                session.as_deref_mut(),
            )
            .await?;
            // A second attempt that misses (another program changed `created_at` in between)
            // matched nothing, as any replacement of a changed document.
            if let (Some(kept), true) = (kept, first) {
                return Ok(Written::Again(kept));
            }
        }
        let result = written?;
        if let (Some((tree, given)), 0) = (&tree, result.matched_count) {
            crate::tree::replace_missed::<T>(self.odm, *tree, &id, given, session.as_deref_mut())
                .await?;
        }
        latest.run(self.odm, session.as_deref_mut()).await?;
        // A latest-N array is the ODM's to write: recomputed, whatever the caller's copy held.
        for copy in copies_in
            .iter()
            .filter(|c| matches!(c.kind, crate::denormalize::CopyKind::Latest { .. }))
        {
            let refresh = crate::denormalize::refresh_latest(
                self.odm,
                copy,
                vec![id.clone()],
                session.as_deref_mut(),
            );
            crate::trace::step!("latest", copy.dependent, refresh).await?;
        }
        if !in_session {
            taken.settle(self.odm).await?;
        }
        Ok(Written::Done(result))
    }
}

/// What one attempt of a replacement did.
enum Written {
    Done(UpdateResult),
    /// Nothing: the struct's `created_at` is not the stored one, which it returns.
    Again(Bson),
}

into_future!(Replace => UpdateResult, "replace_one", |r: &UpdateResult| Some(r.modified_count));

/// Builder returned by [`Odm::delete_one`] and [`Odm::delete_many`]; resolves to the number of
/// documents deleted. Sends one `delete` when nothing references the model and nothing keeps a
/// summary of it; otherwise the delete rules' plan (see [`crate::relations`]), each of its
/// commands once per [chunk](crate::batch) of the ids it names, and, outside a caller's
/// session, the pull of the deleted documents' summaries once more after the delete is visible
/// (so that an insert copying them while they were deleted keeps no summary of them). A plan naming more than 16 MiB
/// of ids does not run in a transaction the ODM opens: the transaction is abandoned
/// (`abortTransaction`) and the plan is read and run again without one, in batches. A tree's
/// nodes are deleted by the tree's rule, with these rules after it: see [`crate::tree`].
#[must_use = "the delete runs when awaited"]
#[derive(Debug)]
pub struct Delete<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    many: bool,
    session: Option<&'a mut ClientSession>,
}

impl<'a, T: Model> Delete<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>, many: bool) -> Self {
        Delete {
            odm,
            filter,
            many,
            session: None,
        }
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(self) -> Result<u64> {
        let filter = super::model_filter(self.filter)?;
        let summarized = crate::denormalize::copies_from(T::COLLECTION)
            .iter()
            .any(|c| {
                matches!(
                    c.kind,
                    crate::denormalize::CopyKind::Summary { .. }
                        | crate::denormalize::CopyKind::Latest { .. }
                )
            });
        let rules = summarized || !crate::relations::references_to(T::COLLECTION).is_empty();
        if let Some(tree) = T::TREE {
            let nodes = crate::tree::delete_nodes::<T>(
                self.odm,
                tree,
                filter,
                self.many,
                rules,
                self.session,
            );
            return Box::pin(crate::trace::step!("tree_delete", T::COLLECTION, nodes)).await;
        }
        if rules {
            let rules = crate::relations::delete_with_rules(
                self.odm,
                T::COLLECTION,
                filter,
                self.many,
                self.session,
            );
            return Box::pin(crate::trace::step!("delete_rules", T::COLLECTION, rules)).await;
        }
        let coll = self.odm.raw_collection::<T>();
        // Shown only when the delete fails (a copy costs less than formatting it).
        let shown = filter.clone();
        let result = if self.many {
            let action = coll.delete_many(filter);
            crate::ops::send!(action, self.session)
        } else {
            let action = coll.delete_one(filter);
            crate::ops::send!(action, self.session)
        };
        Ok(result
            .map_err(|e| Error::from_write(T::COLLECTION, || crate::error::show_filter(&shown), e))?
            .deleted_count)
    }
}

into_future!(Delete => u64, "delete", |n: &u64| Some(*n));

impl Odm {
    /// Updates one loaded document: `update` by its `_id` (and for a sharded model its shard
    /// key values, as [`Odm::delete_document`]), otherwise as [`Odm::update_by_id`]: same
    /// commands.
    ///
    /// For a versioned model (`#[odm(version)]`) the filter also requires the version `doc` was
    /// loaded at, and the update increments it: when the stored document is at another
    /// version, nothing is written and, after one more `find` (of the stored version), the
    /// result is [`Error::VersionConflict`]. The caller's `doc` is not changed: load the
    /// document again to write it again.
    pub fn update_document<'a, T: Model>(&'a self, doc: &T, update: Update<T>) -> UpdateOp<'a, T> {
        let filter = self.document_filter(doc);
        let mut op = UpdateOp::new(self, filter, update, false);
        if let (Some(id), Some(v)) = (doc.document_id(), doc.document_version()) {
            op.loaded = Some((crate::path::encode_value(id).unwrap_or(Bson::Null), v));
        }
        op
    }

    /// Deletes one loaded document: `delete` by its `_id`, and for a sharded model by its shard
    /// key values too, so that the command is routed to the document's shard. Otherwise as
    /// [`Odm::delete_one`] (delete rules, tree rules): same commands.
    pub fn delete_document<'a, T: Model>(&'a self, doc: &T) -> Delete<'a, T> {
        Delete::new(self, self.document_filter(doc), false)
    }

    /// The filter of one loaded document: its `_id`, and its shard key values for a sharded
    /// model.
    fn document_filter<T: Model>(&self, doc: &T) -> Filter<T> {
        match doc.document_id() {
            None => Filter::from_parts(
                Document::new(),
                Some(crate::query::Deferred {
                    what: "document id".to_owned(),
                    message: "the document has no `_id`: it was never stored".to_owned(),
                }),
            ),
            Some(id) => {
                let by_id = T::id_field().eq(id);
                match T::SHARD_KEY {
                    None => by_id,
                    // The key as the insert stored it (a computed one recomputed).
                    Some(key) => match encode_document(doc) {
                        Ok((raw, _)) => {
                            let (mut filter, error) = by_id.into_parts();
                            crate::shard::pin_key(&mut filter, &raw, &key);
                            Filter::from_parts(filter, error)
                        }
                        Err(e) => Filter::from_parts(
                            Document::new(),
                            Some(crate::query::Deferred {
                                what: "document".to_owned(),
                                message: e.to_string(),
                            }),
                        ),
                    },
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, oid::ObjectId};

    #[test]
    fn the_generated_id_goes_first_and_the_rest_is_kept_byte_for_byte() {
        let id = ObjectId::new();
        let rest = doc! {
            "name": "a string", "n": 3_i64, "nested": { "k": [1, { "deep": "x" }] },
            "bin": bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![1, 2, 3] },
        };
        for held in [None, Some(Bson::Null)] {
            let mut d = Document::new();
            if let Some(v) = &held {
                d.insert("_id", v.clone());
            }
            d.extend(rest.clone());
            let raw = RawDocumentBuf::try_from(&d).unwrap();
            let out = with_id_first(&raw, &id).unwrap();
            let mut want = doc! { "_id": id };
            want.extend(rest.clone());
            assert_eq!(
                Document::try_from(out.as_ref()).unwrap(),
                want,
                "held: {held:?}"
            );
            assert_eq!(
                out.as_bytes(),
                RawDocumentBuf::try_from(&want).unwrap().as_bytes()
            );
        }
    }
}
