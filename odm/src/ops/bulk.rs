//! Bulk writes: [`Odm::bulk`], a typed batch of inserts, updates, replacements and deletes of
//! any models, each kept by the maintenance its own operation has.

use bson::{doc, Document};
use mongodb::options::WriteConcern;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::encode::{checked_update, encode_document};
use crate::engine::{BoxFuture, Statements, Writing};
use crate::error::{BulkFailure, BulkWritten};
use crate::pipeline::Route;
use crate::query::Filter;
use crate::update::Update;
use crate::{Error, Model, Odm, Result};

/// Builder returned by [`Odm::bulk`]: writes queued in order with [`insert`](Bulk::insert),
/// [`update_one`](Bulk::update_one), [`update_many`](Bulk::update_many),
/// [`upsert_one`](Bulk::upsert_one),
/// [`replace_one`](Bulk::replace_one), [`delete_one`](Bulk::delete_one) and
/// [`delete_many`](Bulk::delete_many), then `.await`ed for what they did, summed
/// ([`BulkWritten`]).
///
/// Each write is sent as its own operation sends it, so that every copy, count, two-way array,
/// bound, version, tree and delete rule it touches is kept. The writes of a model nothing
/// maintains go together: a run of consecutive writes of one such model and one command
/// (inserts, updates and replacements, deletes) is one `insert`, `update` or `delete` command
/// with a statement per write (split past 100,000 statements or about 8 MiB). A write of a
/// model the ODM maintains sends the commands its operation documents, in its place in the
/// batch. So 1,000 inserts of a plain model are one command, and 1,000 updates of a model
/// whose fields others copy are the 1,000 cascades they would be on their own.
///
/// Ordered (the default), the batch stops at the first write that fails; with
/// [`ordered(false)`](Bulk::ordered) every write is tried. Either way the writes are sent in
/// the order given, and the failures are one [`Error::BulkWrite`] naming each failed write by
/// its place, with what the others did. A write that cannot be prepared (a document that does
/// not encode, an update refused before sending) fails in its place without a command.
#[must_use = "the writes are sent when awaited"]
pub struct Bulk<'a> {
    odm: &'a Odm,
    items: Vec<Item<'a>>,
    ordered: bool,
    concern: Option<Box<WriteConcern>>,
    session: Option<&'a mut ClientSession>,
}

impl std::fmt::Debug for Bulk<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bulk")
            .field("writes", &self.items.len())
            .field("ordered", &self.ordered)
            .finish()
    }
}

/// One queued write.
enum Item<'a> {
    /// A write of a model nothing maintains, as the statement of its command.
    Plain {
        collection: &'static str,
        kind: Statements,
        statement: Document,
    },
    /// A write its own operation sends.
    Maintained(Box<dyn Pending<'a> + 'a>),
    /// A write that could not be prepared.
    Refused(Error),
}

/// A write of a model the ODM maintains, run as its operation.
trait Pending<'a>: Send {
    fn run<'s>(
        self: Box<Self>,
        odm: &'s Odm,
        session: Option<&'s mut ClientSession>,
    ) -> BoxFuture<'s, Result<BulkWritten>>
    where
        'a: 's;
}

impl Odm {
    /// A bulk write: a batch of typed writes of any models, sent in order (see [`Bulk`]).
    pub fn bulk(&self) -> Bulk<'_> {
        Bulk {
            odm: self,
            items: Vec::new(),
            ordered: true,
            concern: None,
            session: None,
        }
    }
}

/// Whether writes of `T` are sent as plain statements: no maintainer concerns the model, and
/// it has no write concern of its own.
fn plain<T: Model>(odm: &Odm) -> bool {
    matches!(crate::pipeline::route::<T>(odm), Route::Plain(_))
        && matches!(odm.writing::<T>(), Writing::This)
}

impl<'a> Bulk<'a> {
    fn push(&mut self, item: Result<Item<'a>>) -> &mut Self {
        self.items.push(item.unwrap_or_else(Item::Refused));
        self
    }

    /// Queues the insert of `doc` (as [`Odm::insert_one`]).
    pub fn insert<T: Model>(&mut self, doc: &'a T) -> &mut Self {
        let item = match plain::<T>(self.odm) {
            true => statement_document::<T>(doc).map(|statement| Item::Plain {
                collection: T::COLLECTION,
                kind: Statements::Insert,
                statement,
            }),
            false => Ok(Item::Maintained(Box::new(Typed::Insert(doc)))),
        };
        self.push(item)
    }

    /// Queues `update` of the first document `filter` matches (as [`Odm::update_one`]).
    pub fn update_one<T: Model>(&mut self, filter: Filter<T>, update: Update<T>) -> &mut Self {
        self.update(filter, update, false, false)
    }

    /// Queues `update` of every document `filter` matches (as [`Odm::update_many`]).
    pub fn update_many<T: Model>(&mut self, filter: Filter<T>, update: Update<T>) -> &mut Self {
        self.update(filter, update, true, false)
    }

    /// Queues `update` of the first document `filter` matches, or the insert of one built
    /// from the filter and the update when none does (as [`Odm::update_one`] with
    /// `.upsert(true)`).
    pub fn upsert_one<T: Model>(&mut self, filter: Filter<T>, update: Update<T>) -> &mut Self {
        self.update(filter, update, false, true)
    }

    fn update<T: Model>(
        &mut self,
        filter: Filter<T>,
        update: Update<T>,
        many: bool,
        upsert: bool,
    ) -> &mut Self {
        let item = match plain::<T>(self.odm) && update.guards().is_empty() {
            true => update_statement(filter, update, many, upsert).map(|statement| Item::Plain {
                collection: T::COLLECTION,
                kind: Statements::Update,
                statement,
            }),
            false => Ok(Item::Maintained(Box::new(Typed::Update {
                filter,
                update,
                many,
                upsert,
            }))),
        };
        self.push(item)
    }

    /// Queues the replacement of the stored document with `doc`'s id by `doc` (as
    /// [`Odm::replace_one`]).
    pub fn replace_one<T: Model>(&mut self, doc: &'a T) -> &mut Self {
        let item = match plain::<T>(self.odm) {
            true => replace_statement(doc).map(|statement| Item::Plain {
                collection: T::COLLECTION,
                kind: Statements::Update,
                statement,
            }),
            false => Ok(Item::Maintained(Box::new(Typed::Replace(doc)))),
        };
        self.push(item)
    }

    /// Queues the delete of the first document `filter` matches (as [`Odm::delete_one`]).
    pub fn delete_one<T: Model>(&mut self, filter: Filter<T>) -> &mut Self {
        self.delete(filter, false)
    }

    /// Queues the delete of every document `filter` matches (as [`Odm::delete_many`]).
    pub fn delete_many<T: Model>(&mut self, filter: Filter<T>) -> &mut Self {
        self.delete(filter, true)
    }

    fn delete<T: Model>(&mut self, filter: Filter<T>, many: bool) -> &mut Self {
        let item = match plain::<T>(self.odm) {
            true => {
                crate::engine::model_filter(filter.scoped(crate::query::Scope::Live)).map(|q| {
                    Item::Plain {
                        collection: T::COLLECTION,
                        kind: Statements::Delete,
                        statement: doc! { "q": q, "limit": if many { 0 } else { 1 } },
                    }
                })
            }
            false => Ok(Item::Maintained(Box::new(Typed::Delete { filter, many }))),
        };
        self.push(item)
    }

    /// Whether the batch stops at the first failed write (`true`, the default) or tries
    /// every write (`false`). The writes are sent in order either way.
    pub fn ordered(mut self, yes: bool) -> Self {
        self.ordered = yes;
        self
    }

    /// The write concern of every write of the batch, and of the ODM's own writes for them.
    pub fn write_concern(mut self, concern: WriteConcern) -> Self {
        self.concern = Some(Box::new(concern));
        self
    }

    /// Runs every write inside the caller's session (in its transaction, when it has one: the
    /// whole batch then commits or aborts with it).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// How many writes are queued.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no write is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The statement of an update of a model nothing maintains, as its plain command sends it.
fn update_statement<T: Model>(
    filter: Filter<T>,
    update: Update<T>,
    many: bool,
    upsert: bool,
) -> Result<Document> {
    let filter = crate::engine::model_filter(filter)?;
    let array_filters = update.array_filters();
    let u = checked_update(T::COLLECTION, update)?;
    let mut statement = doc! { "q": crate::positional::filter_for_update(filter, &u), "u": u };
    if many {
        statement.insert("multi", true);
    }
    if upsert {
        statement.insert("upsert", true);
    }
    if !array_filters.is_empty() {
        statement.insert("arrayFilters", array_filters);
    }
    Ok(statement)
}

/// The statement of a replacement by id of a model nothing maintains.
fn replace_statement<T: Model>(doc: &T) -> Result<Document> {
    let id = doc.document_id().ok_or_else(|| Error::MissingId {
        collection: T::COLLECTION.to_owned(),
    })?;
    let q = crate::engine::model_filter(T::id_field().eq(id))?;
    let u = statement_document(doc)?;
    Ok(doc! { "q": q, "u": u, "upsert": false })
}

/// The largest document the server stores (16 MiB).
const MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// `doc` encoded for a statement: refused in its place, with nothing sent, when it is larger
/// than the server stores, so that it takes no other write of its command down with it.
fn statement_document<T: Model>(doc: &T) -> Result<Document> {
    let (raw, _) = encode_document(doc)?;
    let encode = |message: String| Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: format!(
            "document {}",
            crate::error::show_id(crate::decode::id_of(&raw).as_ref())
        ),
        message,
    };
    if raw.as_bytes().len() > MAX_DOCUMENT_BYTES {
        let size = raw.as_bytes().len();
        return Err(encode(format!(
            "{size} bytes, past the server's 16 MiB for a document"
        )));
    }
    Document::try_from(raw.as_ref()).map_err(|e| encode(e.to_string()))
}

impl<'a> Bulk<'a> {
    async fn run(self) -> Result<BulkWritten> {
        let Bulk {
            odm,
            items,
            ordered,
            concern,
            mut session,
        } = self;
        let made;
        let odm = match concern {
            Some(concern) => {
                made = odm.for_write(*concern);
                &made
            }
            None => odm,
        };
        let mut written = BulkWritten::default();
        let mut failures = Vec::new();
        let mut items = items.into_iter().enumerate().peekable();
        while let Some((index, item)) = items.next() {
            match item {
                Item::Refused(e) => failures.push(BulkFailure::of(index, e)),
                Item::Maintained(write) => match write.run(odm, session.as_deref_mut()).await {
                    Ok(did) => add(&mut written, did),
                    Err(e) => failures.push(BulkFailure::of(index, e)),
                },
                Item::Plain {
                    collection,
                    kind,
                    statement,
                } => {
                    let mut statements = vec![statement];
                    while let Some((_, Item::Plain { statement, .. })) = items.next_if(|(_, i)| {
                        matches!(i, Item::Plain { collection: c, kind: k, .. } if *c == collection && *k == kind)
                    }) {
                        statements.push(statement);
                    }
                    let shown = format!("{} writes of a bulk write", statements.len());
                    let sent = odm
                        .write_statements(
                            collection,
                            kind,
                            statements,
                            ordered,
                            &shown,
                            session.as_deref_mut(),
                        )
                        .await;
                    add(&mut written, counted(kind, &sent));
                    failures.extend(sent.refused.into_iter().map(|r| BulkFailure {
                        index: index + r.index,
                        code: Some(r.code),
                        message: r.message,
                        error: None,
                    }));
                    for (first, e) in sent.failed {
                        failures.push(BulkFailure::of(index + first, e));
                    }
                }
            }
            if ordered && !failures.is_empty() {
                break;
            }
        }
        failures.sort_by_key(|f| f.index);
        match failures.is_empty() {
            true => Ok(written),
            false => Err(Error::BulkWrite { written, failures }),
        }
    }
}

/// What a command of `kind` statements did, by its reply.
fn counted(kind: Statements, batch: &crate::engine::BatchWritten) -> BulkWritten {
    match kind {
        Statements::Insert => BulkWritten {
            inserted: batch.n,
            ..BulkWritten::default()
        },
        Statements::Update => BulkWritten {
            matched: batch.n - batch.upserted.min(batch.n),
            modified: batch.modified,
            upserted: batch.upserted,
            ..BulkWritten::default()
        },
        Statements::Delete => BulkWritten {
            deleted: batch.n,
            ..BulkWritten::default()
        },
    }
}

fn add(sum: &mut BulkWritten, did: BulkWritten) {
    sum.inserted += did.inserted;
    sum.matched += did.matched;
    sum.modified += did.modified;
    sum.upserted += did.upserted;
    sum.deleted += did.deleted;
}

fn updated(r: UpdateResult) -> BulkWritten {
    BulkWritten {
        matched: r.matched_count,
        modified: r.modified_count,
        upserted: u64::from(r.upserted_id.is_some()),
        ..BulkWritten::default()
    }
}

/// A queued write of a model the ODM maintains, as the operation that sends it alone.
enum Typed<'a, T> {
    Insert(&'a T),
    Update {
        filter: Filter<T>,
        update: Update<T>,
        many: bool,
        upsert: bool,
    },
    Replace(&'a T),
    Delete {
        filter: Filter<T>,
        many: bool,
    },
}

/// The session of a queued write's operation, when the batch has one.
macro_rules! in_session {
    ($op:expr, $session:expr) => {
        match $session {
            Some(s) => $op.session(s),
            None => $op,
        }
    };
}

impl<'a, T: Model> Pending<'a> for Typed<'a, T> {
    fn run<'s>(
        self: Box<Self>,
        odm: &'s Odm,
        session: Option<&'s mut ClientSession>,
    ) -> BoxFuture<'s, Result<BulkWritten>>
    where
        'a: 's,
    {
        match *self {
            Typed::Insert(doc) => {
                let op = in_session!(odm.insert_one(doc), session);
                Box::pin(async move {
                    op.await?;
                    Ok(BulkWritten {
                        inserted: 1,
                        ..BulkWritten::default()
                    })
                })
            }
            Typed::Update {
                filter,
                update,
                many,
                upsert,
            } => {
                let op = match many {
                    true => odm.update_many(filter, update),
                    false => odm.update_one(filter, update),
                };
                let op = in_session!(op.upsert(upsert), session);
                Box::pin(async move { op.await.map(updated) })
            }
            Typed::Replace(doc) => {
                let op = in_session!(odm.replace_one(doc), session);
                Box::pin(async move { op.await.map(updated) })
            }
            Typed::Delete { filter, many } => {
                let op = match many {
                    true => odm.delete_many(filter),
                    false => odm.delete_one(filter),
                };
                let op = in_session!(op, session);
                Box::pin(async move {
                    let deleted = op.await?;
                    Ok(BulkWritten {
                        deleted,
                        ..BulkWritten::default()
                    })
                })
            }
        }
    }
}

impl<'a> std::future::IntoFuture for Bulk<'a> {
    type Output = Result<BulkWritten>;
    type IntoFuture = BoxFuture<'a, Result<BulkWritten>>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
