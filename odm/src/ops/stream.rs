//! A query's results as a `futures` [`Stream`], decoded one document at a time from the
//! cursor's batches, and what the query loads after its documents (populate) done a batch of
//! parents at a time.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bson::{Document, RawDocument, RawDocumentBuf};
use futures_util::stream::{self, Stream};
use mongodb::options::FindOptions;
use mongodb::{ClientSession, Cursor, SessionCursor};

use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use super::find::{Find, FindAs, FindParts};
use crate::decode::{decode, Reading};
use crate::engine::Loading;
use crate::{Model, Odm, Result};

/// The number of parents a populated stream holds and populates at once, and the driver's
/// batch size then, unless [`Find::batch_size`] says otherwise.
pub const DEFAULT_STREAM_BATCH: u32 = 100;

/// The stream returned by [`Find::stream`] (and [`FindAs::stream`], decoded into a view):
/// the query's documents, one at a time, each an `odm::Result<T>`. Use it with `futures::StreamExt` / `TryStreamExt`
/// (`while let Some(book) = books.try_next().await? { .. }`).
///
/// Sends the `find` when first polled, then one `getMore` per further batch, as the driver's
/// cursor does; populated, one `find {_id: {$in: ids}}` per relation and level for each batch
/// of parents. Dropping it before its end closes the server's cursor (the driver sends
/// `killCursors`).
#[must_use = "streams do nothing unless polled"]
pub struct FindStream<'a, T> {
    inner: Pin<Box<dyn Stream<Item = Result<T>> + Send + 'a>>,
    span: crate::trace::StreamSpan,
}

impl<T> fmt::Debug for FindStream<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FindStream").finish_non_exhaustive()
    }
}

impl<T> Stream for FindStream<'_, T> {
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<T>>> {
        let this = &mut *self;
        let inner = &mut this.inner;
        this.span.poll(|| inner.as_mut().poll_next(cx))
    }
}

impl<'a, T: Model> Find<'a, T> {
    /// The results as a [`Stream`] of `odm::Result<T>`, with memory bounded by the batch size
    /// instead of the number of results: each document is decoded from the cursor's current
    /// batch when it is reached (the driver's batch size, [`Find::batch_size`], is respected).
    ///
    /// Commands: one `find` when the stream is first polled, one `getMore` per further batch;
    /// with [`Find::populate`], the parents are taken a batch at a time (the batch size, 100
    /// by default, which is then also the driver's) and each batch is populated as
    /// [`Find::populate`] says, one `find {_id: {$in: ids}}` per relation and level for the
    /// batch, before its documents are yielded in the query's order. Dropping the stream
    /// before its end sends `killCursors`. With [`Find::session`], the cursor is the session's
    /// (every command carries it, in its transaction if one is started).
    ///
    /// Errors: a document that does not decode is yielded as the error naming collection,
    /// `_id` and field ([`Error::Decode`](crate::Error::Decode), ...) in its place, and the
    /// stream goes on with the next document, as the cursor is intact (stop at the first with
    /// `try_next()?`, or skip it). An error of the server or the connection, or of a batch's
    /// populate, is yielded once and ends the stream.
    pub fn stream(self) -> FindStream<'a, T> {
        let FindParts {
            odm,
            filter,
            options,
            session,
            loading,
        } = self.into_parts();
        open::<T, T>(odm, filter, options, session, loading)
    }
}

impl<'a, T: Model, U: DeserializeOwned + Send + 'a> FindAs<'a, T, U> {
    /// The results, decoded into `U`, as a [`Stream`]: as [`Find::stream`], one document at a
    /// time from the cursor's batches (a view is not populated). Commands: one `find` when
    /// first polled, one `getMore` per further batch.
    pub fn stream(self) -> FindStream<'a, U> {
        let FindParts {
            odm,
            filter,
            options,
            session,
            ..
        } = self.into_find().into_parts();
        open::<T, U>(odm, filter, options, session, Loading::default())
    }
}

/// The stream of a query on `T`'s collection, its documents decoded into `U`.
fn open<'a, T: Model, U: DeserializeOwned + Send + 'a>(
    odm: &'a Odm,
    filter: crate::Filter<T>,
    mut options: FindOptions,
    session: Option<&'a mut ClientSession>,
    loading: Loading<U>,
) -> FindStream<'a, U> {
    let batch = match (loading.get().is_none(), options.batch_size) {
        (true, _) => 1,
        (false, Some(n)) => n.max(1) as usize,
        (false, None) => {
            options.batch_size = Some(DEFAULT_STREAM_BATCH);
            DEFAULT_STREAM_BATCH as usize
        }
    };
    let state = State::<T, U> {
        odm,
        start: Some((crate::engine::model_filter(filter), options, session)),
        cursor: None,
        loading,
        batch,
        ready: VecDeque::new(),
        done: false,
        unrecorded: 0,
        _model: PhantomData,
    };
    FindStream {
        inner: Box::pin(stream::unfold(state, State::next)),
        span: crate::trace::StreamSpan::new(crate::trace::operation_span!("stream", T::COLLECTION)),
    }
}

/// The driver's cursor, with the caller's session when there is one.
pub(crate) enum Open<'a> {
    Plain(Cursor<RawDocumentBuf>),
    InSession(SessionCursor<RawDocumentBuf>, &'a mut ClientSession),
}

impl<'a> Open<'a> {
    /// Sends the `find` of `T`'s collection, in `session` when given.
    pub(crate) async fn find<T: Model>(
        odm: &Odm,
        filter: Document,
        options: FindOptions,
        session: Option<&'a mut ClientSession>,
    ) -> Result<Open<'a>> {
        let coll = odm.raw_collection::<T>();
        let action = coll.find(filter).with_options(options);
        Ok(match session {
            None => Open::Plain(action.await.map_err(Odm::driver_error::<T>)?),
            Some(s) => {
                let cursor = action
                    .session(&mut *s)
                    .await
                    .map_err(Odm::driver_error::<T>)?;
                Open::InSession(cursor, s)
            }
        })
    }

    pub(crate) async fn advance(&mut self) -> mongodb::error::Result<bool> {
        match self {
            Open::Plain(c) => c.advance().await,
            Open::InSession(c, s) => c.advance(s).await,
        }
    }

    pub(crate) fn current(&self) -> &RawDocument {
        match self {
            Open::Plain(c) => c.current(),
            Open::InSession(c, _) => c.current(),
        }
    }

    pub(crate) fn session(&mut self) -> Option<&mut ClientSession> {
        match self {
            Open::Plain(_) => None,
            Open::InSession(_, s) => Some(&mut **s),
        }
    }
}

type Start<'a> = (Result<Document>, FindOptions, Option<&'a mut ClientSession>);

struct State<'a, T: Model, U> {
    odm: &'a Odm,
    /// The query, until it is sent.
    start: Option<Start<'a>>,
    cursor: Option<Open<'a>>,
    /// What the query loads after its documents, a batch at a time.
    loading: Loading<U>,
    /// How many documents are taken from the cursor at once: 1, or the populate batch.
    batch: usize,
    /// Decoded (and populated) documents and decode errors, in the query's order.
    ready: VecDeque<Result<U>>,
    /// The cursor is exhausted, or an error ended the stream.
    done: bool,
    /// Documents read and not yet counted by the read/write audit.
    unrecorded: usize,
    _model: PhantomData<fn() -> T>,
}

impl<'a, T: Model, U: DeserializeOwned> State<'a, T, U> {
    async fn next(mut self) -> Option<(Result<U>, Self)> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                return Some((item, self));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.fill().await {
                self.done = true;
                self.ready.push_back(Err(e));
            }
        }
    }

    /// Sends the query, or takes the next batch from the cursor (populated when asked);
    /// an error ends the stream once the documents read before it are yielded.
    async fn fill(&mut self) -> Result<()> {
        if let Some((filter, options, session)) = self.start.take() {
            self.cursor = Some(Open::find::<T>(self.odm, filter?, options, session).await?);
        }
        let Some(cursor) = self.cursor.as_mut() else {
            self.done = true;
            return Ok(());
        };
        let from = Reading::of::<T>(self.odm);
        let mut taken = Vec::with_capacity(self.batch);
        let mut failed = None;
        while taken.len() < self.batch {
            match cursor.advance().await {
                Ok(true) => taken.push(decode::<U>(&from, cursor.current())),
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    failed = Some(Odm::driver_error::<T>(e));
                    break;
                }
            }
        }
        self.unrecorded += taken.len();
        if self.unrecorded >= DEFAULT_STREAM_BATCH as usize {
            let n = std::mem::take(&mut self.unrecorded);
            crate::pipeline::read::<T>(self.odm, n);
        }
        if let Some(loads) = self.loading.get() {
            // The parents of the batch are populated together; a document that did not
            // decode keeps its place as its error.
            let mut parents = Vec::with_capacity(taken.len());
            let mut errors: Vec<Option<crate::Error>> = Vec::with_capacity(taken.len());
            for item in taken {
                match item {
                    Ok(parent) => {
                        parents.push(parent);
                        errors.push(None);
                    }
                    Err(e) => errors.push(Some(e)),
                }
            }
            loads
                .batch(self.odm, &mut parents, cursor.session())
                .await?;
            let mut parents = parents.into_iter();
            for error in errors {
                match error {
                    Some(e) => self.ready.push_back(Err(e)),
                    None => self.ready.extend(parents.next().map(Ok)),
                }
            }
        } else {
            self.ready.extend(taken);
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl<T: Model, U> State<'_, T, U> {
    fn record(&mut self) {
        crate::pipeline::read::<T>(self.odm, std::mem::take(&mut self.unrecorded));
    }
}

impl<T: Model, U> Drop for State<'_, T, U> {
    fn drop(&mut self) {
        // The read/write audit counts what a stream dropped before its end had read, too.
        self.record();
    }
}
