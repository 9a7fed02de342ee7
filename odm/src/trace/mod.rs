//! Tracing: every operation is a [`tracing`] span, and the work it generates (copies filled,
//! cascades, latest-N recomputations, delete rules, subtree moves, populate levels) nests under
//! it as child spans.
//!
//! Spans have the target `odm` and level `INFO`. An operation's span is named after the
//! operation (`find`, `find_one`, `insert_one`, `update`, `delete`, `move_under`, `page`,
//! `stream`, `bucket_add`, `counter_record`, `quota_take`, `sync_indexes`, `verify_copies`,
//! `cascade_worker`, ...; a `stream`'s span covers its polls and is recorded when it ends or
//! is dropped), a step's after the step (`fill`, `cascade`, `latest`, `delete_rules`,
//! `tree_delete`, `populate`). Both carry:
//!
//! - `collection`: the model's collection (`*` for the work that spans every registered model:
//!   `sync_indexes`, `sync_validators`, `verify_copies`, `cascade_worker`);
//! - `operation` (operations only): the operation's name again, for subscribers that index
//!   fields rather than names;
//! - `commands`: the commands sent while the span ran, its steps' included (see
//!   [`count_commands`]), recorded when it ends;
//! - `documents` (operations): the documents returned, inserted, modified (an update's
//!   `modified_count`) or deleted, a count's result; recorded when it succeeds;
//! - `duration_us`: the wall-clock time from the first poll to the end, in microseconds;
//! - `error`: the error's message, when the operation or step fails.
//!
//! Without a subscriber interested in `odm` spans at `INFO`, an operation pays one check of
//! the callsite's cached interest: no span is built, nothing is formatted or allocated, no
//! clock is read.

use std::cell::Cell;
use std::future::Future;
use std::time::Instant;

use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::ClientOptions;
use tracing::Span;

thread_local! {
    /// The commands started on this thread so far. An operation's future is polled on one
    /// thread at a time and the driver reports a command synchronously from inside that poll,
    /// so the difference around a poll is what the poll sent (its steps' included, since they
    /// are polled inside it).
    static STARTED: Cell<u64> = const { Cell::new(0) };
}

/// Counts a command the driver is starting, for the `commands` field of the span being
/// polled. The handler [`count_commands`] installs calls it; a handler of your own may instead,
/// synchronously, for each `CommandEvent::Started` (the driver calls a callback handler from
/// inside the poll of the operation that sends the command, which is how the count finds its
/// span).
pub fn command_started() {
    STARTED.with(|s| s.set(s.get().wrapping_add(1)));
}

fn started() -> u64 {
    STARTED.with(Cell::get)
}

/// Makes the client report its commands to the spans' `commands` field: installs a command
/// event handler on `options` that counts each started command (keeping the handler already
/// there, which is called after the count).
///
/// Without it, spans record `commands = 0`: the driver only tells an event handler. The test
/// harness (`odm::testing::TestDb`, feature `testing`) installs it after its
/// command log. A handler makes the driver build
/// an event for each command it sends (the command document is copied into it), which is
/// why this is not installed by [`Odm::connect`](crate::Odm::connect).
pub fn count_commands(options: &mut ClientOptions) {
    let previous = options.command_event_handler.take();
    options.command_event_handler = Some(EventHandler::callback(move |ev: CommandEvent| {
        let start = matches!(ev, CommandEvent::Started(_));
        if start {
            command_started();
        }
        // What the driver does with each kind of handler (it does not export that).
        match &previous {
            Some(EventHandler::Callback(f)) => f(ev),
            Some(EventHandler::AsyncCallback(f)) => {
                tokio::spawn(f(ev));
            }
            Some(EventHandler::TokioMpsc(sender)) => {
                let sender = sender.clone();
                tokio::spawn(async move {
                    let _ = sender.send(ev).await;
                });
            }
            _ => {}
        }
    }));
}

/// Runs `fut` inside `span`, recording `commands`, `documents`, `duration_us` and `error`
/// when it ends. A disabled span costs nothing more than awaiting `fut`.
pub(crate) async fn traced<F, O>(
    span: Span,
    fut: F,
    documents: impl FnOnce(&O) -> Option<u64>,
) -> crate::Result<O>
where
    F: Future<Output = crate::Result<O>>,
{
    if span.is_disabled() {
        return fut.await;
    }
    let start = Instant::now();
    let mut commands = 0u64;
    let mut fut = std::pin::pin!(fut);
    let out = std::future::poll_fn(|cx| {
        let _entered = span.enter();
        let before = started();
        let poll = fut.as_mut().poll(cx);
        commands += started().wrapping_sub(before);
        poll
    })
    .await;
    span.record("commands", commands);
    match &out {
        Ok(value) => {
            if let Some(n) = documents(value) {
                span.record("documents", n);
            }
        }
        Err(e) => {
            span.record("error", tracing::field::display(e));
        }
    }
    span.record(
        "duration_us",
        u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
    out
}

/// The span of a stream of results: entered at each poll, it records the commands sent while
/// polled, the documents yielded (`documents`), the first error yielded, and `duration_us`
/// from the first poll, when the stream ends or is dropped.
pub(crate) struct StreamSpan {
    span: Span,
    start: Option<Instant>,
    commands: u64,
    documents: u64,
    failed: bool,
    finished: bool,
}

impl StreamSpan {
    pub(crate) fn new(span: Span) -> Self {
        StreamSpan {
            span,
            start: None,
            commands: 0,
            documents: 0,
            failed: false,
            finished: false,
        }
    }

    /// Polls the stream through `poll`, inside the span.
    pub(crate) fn poll<T>(
        &mut self,
        poll: impl FnOnce() -> std::task::Poll<Option<crate::Result<T>>>,
    ) -> std::task::Poll<Option<crate::Result<T>>> {
        use std::task::Poll;
        if self.span.is_disabled() {
            return poll();
        }
        self.start.get_or_insert_with(Instant::now);
        let out = {
            let _entered = self.span.enter();
            let before = started();
            let out = poll();
            self.commands += started().wrapping_sub(before);
            out
        };
        match &out {
            Poll::Ready(Some(Ok(_))) => self.documents += 1,
            Poll::Ready(Some(Err(e))) if !self.failed => {
                self.failed = true;
                self.span.record("error", tracing::field::display(e));
            }
            Poll::Ready(None) => self.finish(),
            _ => {}
        }
        out
    }

    fn finish(&mut self) {
        if self.finished || self.span.is_disabled() {
            return;
        }
        self.finished = true;
        self.span.record("commands", self.commands);
        self.span.record("documents", self.documents);
        let elapsed = self.start.map_or(0, |s| s.elapsed().as_micros());
        self.span
            .record("duration_us", u64::try_from(elapsed).unwrap_or(u64::MAX));
    }
}

impl Drop for StreamSpan {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `fut` boxed as an operation's `IntoFuture`, traced in `span`; without a subscriber for it,
/// the box holds `fut` itself rather than the tracing around it.
pub(crate) fn boxed<'a, O: 'a>(
    span: Span,
    fut: impl Future<Output = crate::Result<O>> + Send + 'a,
    documents: impl FnOnce(&O) -> Option<u64> + Send + 'a,
) -> futures_util::future::BoxFuture<'a, crate::Result<O>> {
    if span.is_disabled() {
        return Box::pin(fut);
    }
    Box::pin(traced(span, fut, documents))
}

/// The span of an operation named `$name` (a literal) on `$collection`.
macro_rules! operation_span {
    ($name:literal, $collection:expr) => {
        ::tracing::info_span!(
            target: "odm",
            $name,
            collection = $collection,
            operation = $name,
            commands = ::tracing::field::Empty,
            documents = ::tracing::field::Empty,
            duration_us = ::tracing::field::Empty,
            error = ::tracing::field::Empty,
        )
    };
}
pub(crate) use operation_span;

/// `$fut` traced as the step `$name` (a literal) of the operation being polled, on
/// `$collection`; evaluates to a future of the same output.
macro_rules! step {
    ($name:literal, $collection:expr, $fut:expr) => {
        $crate::trace::step!($name, $collection, $fut, |_| None)
    };
    ($name:literal, $collection:expr, $fut:expr, $documents:expr) => {
        $crate::trace::traced(
            ::tracing::info_span!(
                target: "odm",
                $name,
                collection = $collection,
                commands = ::tracing::field::Empty,
                documents = ::tracing::field::Empty,
                duration_us = ::tracing::field::Empty,
                error = ::tracing::field::Empty,
            ),
            $fut,
            $documents,
        )
    };
}
pub(crate) use step;
