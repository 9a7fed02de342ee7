//! `Odm::watch`: the changes of a model's collection as typed events, for the application's
//! own use (a cache to refresh, a search index to feed, a notification to send).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bson::{doc, Bson, Document, RawDocumentBuf};
use futures_util::Stream;
use mongodb::change_stream::event::{ChangeStreamEvent, OperationType, ResumeToken};
use mongodb::change_stream::ChangeStream;
use mongodb::options::FullDocumentType;

use crate::decode::{decode, Reading};
use crate::{Error, Model, Odm, Result};

/// Builder returned by [`Odm::watch`]; `.await` it for the stream of [`Change`]s. Opening it
/// sends one `aggregate` with a `$changeStream` stage on the model's collection (and a
/// `$match` of the inserts, updates, replacements and deletes); the stream then sends
/// `getMore`s as it is read.
#[must_use = "the change stream opens when awaited"]
#[derive(Debug)]
pub struct Watch<'a, T> {
    odm: &'a Odm,
    after: Option<ResumeToken>,
    lookup: bool,
    batch: Option<u32>,
    wait: Option<Duration>,
    _model: std::marker::PhantomData<fn() -> T>,
}

impl<'a, T: Model> Watch<'a, T> {
    pub(crate) fn new(odm: &'a Odm) -> Self {
        Watch {
            odm,
            after: None,
            lookup: false,
            batch: None,
            wait: None,
            _model: std::marker::PhantomData,
        }
    }

    /// Resumes after `token` (a [`Change::token`] or [`Changes::resume_token`] the application
    /// stored), instead of starting from the present. A token the server's history no longer
    /// holds is [`Error::ChangeStreamHistoryLost`] when the stream opens.
    pub fn resume_after(mut self, token: ResumeToken) -> Self {
        self.after = Some(token);
        self
    }

    /// Updates carry the whole document as it is when the event is read
    /// (`fullDocument: "updateLookup"`): one more read on the server per update.
    pub fn with_documents_of_updates(mut self) -> Self {
        self.lookup = true;
        self
    }

    /// The number of events per reply (`batchSize`).
    pub fn batch_size(mut self, n: u32) -> Self {
        self.batch = Some(n);
        self
    }

    /// How long the server waits for a change before an empty reply (`maxAwaitTimeMS`).
    pub fn max_await_time(mut self, wait: Duration) -> Self {
        self.wait = Some(wait);
        self
    }

    async fn run(self) -> Result<Changes<'a, T>> {
        let pipeline = [doc! { "$match": {
            "operationType": { "$in": ["insert", "update", "replace", "delete"] },
        } }];
        let coll = self.odm.raw_collection::<T>();
        let mut action = coll.watch().pipeline(pipeline).resume_after(self.after);
        if let Some(n) = self.batch {
            action = action.batch_size(n);
        }
        if let Some(wait) = self.wait {
            action = action.max_await_time(wait);
        }
        if self.lookup {
            action = action.full_document(FullDocumentType::UpdateLookup);
        }
        let stream = action
            .await
            .map_err(|e| crate::follower::refusal(self.odm, e))?;
        Ok(Changes {
            odm: self.odm,
            inner: stream,
            _model: std::marker::PhantomData,
        })
    }
}

impl<'a, T: Model> std::future::IntoFuture for Watch<'a, T> {
    type Output = Result<Changes<'a, T>>;
    type IntoFuture = futures_util::future::BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// What happened to one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// Inserted: [`Change::document`] is the document.
    Insert,
    /// Updated: [`Change::updated_fields`] and [`Change::removed_fields`] say how;
    /// [`Change::document`] is the whole document when the stream was opened
    /// [`with_documents_of_updates`](Watch::with_documents_of_updates) (and the document
    /// still exists).
    Update,
    /// Replaced: [`Change::document`] is the new document.
    Replace,
    /// Deleted: only its `_id` is known.
    Delete,
}

/// One change of a model's collection, by this program or another.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Change<T> {
    /// What happened.
    pub kind: ChangeKind,
    /// The `_id` of the document changed.
    pub id: Bson,
    /// The document, decoded into the model (see [`ChangeKind`] for when it is there).
    pub document: Option<T>,
    /// For an update: the fields it set, by stored path.
    pub updated_fields: Option<Document>,
    /// For an update: the fields it removed.
    pub removed_fields: Vec<String>,
    /// Where the stream is after this change: store it, and resume after it with
    /// [`Watch::resume_after`].
    pub token: ResumeToken,
    /// When the server applied the change, when it says.
    pub wall_time: Option<bson::DateTime>,
}

/// The stream of a model's [`Change`]s returned by [`Watch`]. A document that does not decode
/// into the model is an `Err` naming the collection, its `_id` and the field; the stream goes
/// on after it.
pub struct Changes<'a, T> {
    odm: &'a Odm,
    inner: ChangeStream<ChangeStreamEvent<RawDocumentBuf>>,
    _model: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Changes<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").finish_non_exhaustive()
    }
}

impl<T: Model> Changes<'_, T> {
    /// Where the stream is, also between changes (the server's post-batch token): stored
    /// after a quiet period, it saves reading again what the stream went past.
    pub fn resume_token(&self) -> Option<ResumeToken> {
        self.inner.resume_token()
    }

    fn change(&self, event: ChangeStreamEvent<RawDocumentBuf>) -> Result<Change<T>> {
        let kind = match event.operation_type {
            OperationType::Insert => ChangeKind::Insert,
            OperationType::Update => ChangeKind::Update,
            OperationType::Replace => ChangeKind::Replace,
            OperationType::Delete => ChangeKind::Delete,
            other => {
                return Err(Error::Unsupported(format!(
                    "a change of `{}` the stream does not select: {other:?}",
                    T::COLLECTION
                )))
            }
        };
        let id = event
            .document_key
            .as_ref()
            .and_then(|k| k.get("_id").cloned())
            .unwrap_or(Bson::Null);
        let document = event
            .full_document
            .as_ref()
            .map(|raw| decode(&Reading::of::<T>(self.odm), raw))
            .transpose()?;
        let (updated_fields, removed_fields) = match event.update_description {
            Some(d) => (Some(d.updated_fields), d.removed_fields),
            None => (None, Vec::new()),
        };
        Ok(Change {
            kind,
            id,
            document,
            updated_fields,
            removed_fields,
            token: event.id,
            wall_time: event.wall_time,
        })
    }
}

impl<T: Model> Stream for Changes<'_, T> {
    type Item = Result<Change<T>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(event))) => Poll::Ready(Some(self.change(event))),
            Poll::Ready(Some(Err(e))) => {
                Poll::Ready(Some(Err(crate::follower::refusal(self.odm, e))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Odm {
    /// The changes of `T`'s collection from now on (or after a stored token), as typed
    /// events: see [`Watch`]. Needs a replica set or a sharded cluster (a standalone server is
    /// [`Error::ChangeStreamsUnavailable`]).
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # use futures_util::TryStreamExt;
    /// # #[derive(Model, Serialize, Deserialize)]
    /// # #[odm(collection = "books")]
    /// # struct Book {
    /// #     #[serde(rename = "_id")]
    /// #     id: i32,
    /// #     title: String,
    /// # }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let mut changes = odm.watch::<Book>().await?;
    /// while let Some(change) = changes.try_next().await? {
    ///     println!("{:?} {}", change.kind, change.id);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn watch<T: Model>(&self) -> Watch<'_, T> {
        Watch::new(self)
    }
}
