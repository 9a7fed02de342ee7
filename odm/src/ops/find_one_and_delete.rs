//! `find_one_and_delete`: one document deleted and returned, with everything its delete does.

use bson::{doc, Bson, Document, RawDocumentBuf};
use mongodb::options::WriteConcern;
use mongodb::ClientSession;

use super::into_future;
use crate::decode::decode;
use crate::engine::{BoxFuture, DeleteCall, Own, Returning};
use crate::pipeline::Route;
use crate::query::{Filter, Scope, Sort};
use crate::{Model, Odm, Result};

/// Builder returned by [`Odm::find_one_and_delete`]; resolves to the document deleted, as it
/// was, or `None` when none matches.
///
/// For a model no maintainer concerns (no delete rules, copies, tree, soft deletes, ...),
/// sends one `findAndModify` with `remove: true`. Otherwise the document is read first and
/// then deleted as [`Odm::delete_one`] deletes it, so that everything that delete does is done
/// (a soft delete marks it, delete rules apply, summaries of it are pulled): one `find`
/// (limited to one, in the sort's order), then the commands of `delete_one` by its `_id` and
/// the filter, in one transaction where the deployment has them (plus `commitTransaction`),
/// or in the caller's session. Without either, a document deleted or changed by another
/// writer between the read and the delete is read again (up to three times; then `None`).
#[must_use = "the delete runs when awaited"]
#[derive(Debug)]
pub struct FindOneAndDelete<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    sort: Option<Document>,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
}

impl<'a, T: Model> FindOneAndDelete<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>) -> Self {
        FindOneAndDelete {
            odm,
            filter,
            sort: None,
            session: None,
            concern: None,
        }
    }

    /// Which document is taken when several match (the oldest job of a queue first).
    pub fn sort(mut self, sort: Sort<T>) -> Self {
        self.sort = Some(sort.into_document());
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(mut self) -> Result<Option<T>> {
        crate::engine::concerned!(return await, self: FindOneAndDelete.sent);
        self.sent().await
    }

    /// The delete, on this builder's handle.
    async fn sent(self) -> Result<Option<T>> {
        // A delete reaches live documents, whatever the filter's scope.
        let filter = crate::engine::model_filter(self.filter.scoped(Scope::Live))?;
        let found = match crate::pipeline::route::<T>(self.odm) {
            Route::Plain(_) => {
                let write = Own::delete(T::COLLECTION, filter, "find_one_and_delete").of::<T>();
                let returning = Returning {
                    sort: self.sort,
                    ..Returning::default()
                };
                let found = self.odm.modify_own(write.one(), returning, self.session);
                found.await?.map(raw_of).transpose()?
            }
            Route::Maintained => {
                let taken = Taken::<T> {
                    filter,
                    sort: self.sort,
                    _model: std::marker::PhantomData,
                };
                read_then_write(self.odm, &taken, self.session, delete_attempt::<T>).await?
            }
        };
        found
            .map(|raw| decode(&crate::decode::Reading::of::<T>(self.odm), &raw))
            .transpose()
    }
}

crate::engine::write_options!(@concern FindOneAndDelete);

into_future!(FindOneAndDelete => Option<T>, "find_one_and_delete", |v: &Option<T>| Some(v.is_some().into()));

/// A document returned by the server as a `Document`, as the decoder reads it.
pub(super) fn raw_of(doc: Document) -> Result<RawDocumentBuf> {
    RawDocumentBuf::try_from(&doc).map_err(|e| crate::Error::Encode {
        collection: String::new(),
        what: "the document returned".to_owned(),
        message: e.to_string(),
    })
}

/// `filter` narrowed to the document with `_id` `id`.
pub(super) fn with_id(mut filter: Document, id: Bson) -> Document {
    if filter.contains_key("_id") {
        return doc! { "$and": [filter, { "_id": { "$eq": id } }] };
    }
    filter.insert("_id", id);
    filter
}

/// What a read-then-write takes: the model's filter and the order that picks one document.
pub(super) struct Taken<T> {
    pub(super) filter: Document,
    pub(super) sort: Option<Document>,
    pub(super) _model: std::marker::PhantomData<fn() -> T>,
}

/// How one attempt of a read-then-write ended.
pub(super) enum Attempt {
    /// Nothing matched.
    None,
    /// The document read was written: as it was read.
    Done(RawDocumentBuf),
    /// The document read was gone or changed when written: read again.
    Lost,
}

/// The first document `taken` matches, read from the primary in `session`: one `find`.
pub(super) async fn read_one<T: Model>(
    odm: &Odm,
    taken: &Taken<T>,
    session: Option<&mut ClientSession>,
) -> Result<Option<RawDocumentBuf>> {
    let coll = odm.own_collection::<T>();
    let mut action = coll.find_one(taken.filter.clone());
    if let Some(sort) = &taken.sort {
        action = action.sort(sort.clone());
    }
    crate::engine::send!(action, session).map_err(Odm::driver_error::<T>)
}

/// Reads the document and deletes it as `delete_one` would, by its `_id` and the filter.
async fn attempt<T: Model>(
    odm: &Odm,
    taken: &Taken<T>,
    mut session: Option<&mut ClientSession>,
) -> Result<Attempt> {
    let Some(found) = read_one(odm, taken, session.as_deref_mut()).await? else {
        return Ok(Attempt::None);
    };
    let id = crate::decode::id_of(&found).unwrap_or(Bson::Null);
    let call = DeleteCall {
        odm,
        filter: with_id(taken.filter.clone(), id),
        many: false,
        hard: false,
        session,
        extras: None,
    };
    Ok(match crate::pipeline::delete::<T>(call).await? {
        0 => Attempt::Lost,
        _ => Attempt::Done(found),
    })
}

/// One attempt of a read-then-write on the context `C`, in the session when given.
pub(super) type AttemptFn<C> =
    for<'s> fn(&'s Odm, &'s C, Option<&'s mut ClientSession>) -> BoxFuture<'s, Result<Attempt>>;

/// The attempt of [`FindOneAndDelete`], boxed.
fn delete_attempt<'s, T: Model>(
    odm: &'s Odm,
    taken: &'s Taken<T>,
    session: Option<&'s mut ClientSession>,
) -> BoxFuture<'s, Result<Attempt>> {
    Box::pin(attempt(odm, taken, session))
}

/// Runs `attempt` in the caller's session (once), in a transaction of the ODM's own (whose
/// retries answer a conflicting writer), or without one, reading again up to three times when
/// another writer took the document first. The document the attempt wrote, as it returned it.
pub(super) async fn read_then_write<C: Sync>(
    odm: &Odm,
    context: &C,
    session: Option<&mut ClientSession>,
    attempt: AttemptFn<C>,
) -> Result<Option<RawDocumentBuf>> {
    let outcome = match session {
        Some(s) => attempt(odm, context, Some(s)).await?,
        None if odm.supports_transactions().await? => {
            crate::transaction::in_transaction(odm, context, |odm, s, c| attempt(odm, c, Some(s)))
                .await?
        }
        None => {
            let mut outcome = Attempt::Lost;
            for _ in 0..3 {
                outcome = attempt(odm, context, None).await?;
                if !matches!(outcome, Attempt::Lost) {
                    break;
                }
            }
            outcome
        }
    };
    Ok(match outcome {
        Attempt::Done(found) => Some(found),
        Attempt::None | Attempt::Lost => None,
    })
}
