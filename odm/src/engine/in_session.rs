//! The builder of the operations of handles (buckets, counters, quotas): `.session(..)`, then
//! `.await`.

use std::fmt;
use std::future::IntoFuture;

use mongodb::ClientSession;

use super::BoxFuture;
use crate::Result;

/// What runs an operation, given the caller's session or none.
type Run<'a, R> =
    Box<dyn FnOnce(Option<&'a mut ClientSession>) -> BoxFuture<'a, Result<R>> + Send + 'a>;

/// An operation of [`Buckets`](crate::bucket::Buckets), [`Counters`](crate::counters::Counters)
/// or [`Quota`](crate::counters::Quota), ready to run: `.await` it, after
/// [`InSession::session`] to run it in the caller's session (and its transaction). The
/// operation documents the commands it sends; the builder adds none.
#[must_use = "the operation runs when awaited"]
pub struct InSession<'a, R> {
    span: tracing::Span,
    run: Run<'a, R>,
    session: Option<&'a mut ClientSession>,
}

impl<R> fmt::Debug for InSession<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InSession")
            .field("session", &self.session.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a, R> InSession<'a, R> {
    /// The operation `run`, traced in `span` (see [`crate::trace`]).
    pub(crate) fn new(
        span: tracing::Span,
        run: impl FnOnce(Option<&'a mut ClientSession>) -> BoxFuture<'a, Result<R>> + Send + 'a,
    ) -> Self {
        InSession {
            span,
            run: Box::new(run),
            session: None,
        }
    }

    /// Runs the operation's commands in `session`, and so in its transaction when one is
    /// started; the caller commits it.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }
}

impl<'a, R: 'a> IntoFuture for InSession<'a, R> {
    type Output = Result<R>;
    type IntoFuture = BoxFuture<'a, Result<R>>;

    fn into_future(self) -> Self::IntoFuture {
        if self.span.is_disabled() {
            return (self.run)(self.session);
        }
        crate::trace::boxed(self.span, (self.run)(self.session), |_| None)
    }
}
