//! The future of a write, unboxed: for a plain command (no maintainer takes the call), the
//! driver's own future and what an error message needs, polled in place; otherwise the boxed
//! future of the maintainers, or an error found before anything was sent.
//!
//! A plain write so costs what the driver's does: no allocation of odm's own and no extra
//! layer of `async` state between the caller's `.await` and the driver's future. The public
//! futures of the builders ([`crate::ops::UpdateFuture`] and the others) wrap one of these.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};

use mongodb::results::DeleteResult;

use super::BoxFuture;
use crate::error::Shown;
use crate::{Error, Result};

/// The future the driver gives for its action `A`.
pub(crate) type DriverFuture<A> = <A as IntoFuture>::IntoFuture;

/// What a plain write resolves to, from the driver's reply `R`.
pub(crate) trait Settle<R> {
    type Out;
    fn settle(self, reply: R) -> Self::Out;
}

/// The driver's reply itself (updates, replacements).
pub(crate) struct Same;

impl<R> Settle<R> for Same {
    type Out = R;
    fn settle(self, reply: R) -> R {
        reply
    }
}

/// How many documents were deleted.
pub(crate) struct Deleted;

impl Settle<DeleteResult> for Deleted {
    type Out = u64;
    fn settle(self, reply: DeleteResult) -> u64 {
        reply.deleted_count
    }
}

/// A value known before the write was sent (the id of an inserted document).
pub(crate) struct Known<V>(pub(crate) V);

impl<R, V> Settle<R> for Known<V> {
    type Out = V;
    fn settle(self, _reply: R) -> V {
        self.0
    }
}

/// A write on its way: `F` the driver's future, `S` what its reply becomes.
pub(crate) enum Sending<'a, F, S, O> {
    /// The plain command, sent by the driver.
    Plain {
        driver: F,
        settle: Option<S>,
        collection: &'static str,
        /// The filter (or id) a failed write names.
        shown: Shown,
        /// Named as a document (`{ _id: .. }`, inserts and replacements) rather than as a
        /// filter.
        as_id: bool,
    },
    /// The maintainers' future, or a plain command on a collection made inside its future.
    Boxed(BoxFuture<'a, Result<O>>),
    /// Refused before anything was sent; `None` once taken.
    Ready(Option<Result<O>>),
}

impl<'a, F, S, O> Sending<'a, F, S, O> {
    /// The plain command's future `driver`, resolving as `settle` says; a failure names
    /// `collection` and `shown`.
    pub(crate) fn plain(driver: F, settle: S, collection: &'static str, shown: Shown) -> Self {
        Sending::Plain {
            driver,
            settle: Some(settle),
            collection,
            shown,
            as_id: false,
        }
    }

    /// As [`Sending::plain`], a failure naming the document by its id `shown`.
    pub(crate) fn plain_document(
        driver: F,
        settle: S,
        collection: &'static str,
        shown: Shown,
    ) -> Self {
        Sending::Plain {
            driver,
            settle: Some(settle),
            collection,
            shown,
            as_id: true,
        }
    }

    /// An error found before anything was sent.
    pub(crate) fn failed(error: Error) -> Self {
        Sending::Ready(Some(Err(error)))
    }
}

impl<'a, F, S, O> From<BoxFuture<'a, Result<O>>> for Sending<'a, F, S, O> {
    fn from(boxed: BoxFuture<'a, Result<O>>) -> Self {
        Sending::Boxed(boxed)
    }
}

// No field is ever pinned in place: the driver's future is `Unpin` (required below) and the
// boxed one is pinned by its box.
impl<F, S, O> Unpin for Sending<'_, F, S, O> {}

impl<F, R, S, O> Future for Sending<'_, F, S, O>
where
    F: Future<Output = mongodb::error::Result<R>> + Unpin,
    S: Settle<R, Out = O>,
{
    type Output = Result<O>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<O>> {
        match self.get_mut() {
            Sending::Plain {
                driver,
                settle,
                collection,
                shown,
                as_id,
            } => match Pin::new(driver).poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(reply)) => {
                    let settle = settle
                        .take()
                        .expect("a write's future is polled after its end");
                    Poll::Ready(Ok(settle.settle(reply)))
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(failure(collection, shown, *as_id, e))),
            },
            Sending::Boxed(boxed) => boxed.as_mut().poll(cx),
            Sending::Ready(ready) => Poll::Ready(
                ready
                    .take()
                    .expect("a write's future is polled after its end"),
            ),
        }
    }
}

/// The error of a plain write the server (or the driver) refused, naming its filter or id:
/// out of the way of the successful path, which is the one polled again and again.
#[cold]
#[inline(never)]
fn failure(collection: &str, shown: &Shown, as_id: bool, e: mongodb::error::Error) -> Error {
    // A document the driver serialized itself and could not: as odm's own encoding says it.
    if as_id {
        let cause = match &*e.kind {
            mongodb::error::ErrorKind::BsonSerialization(cause) => Some(cause.to_string()),
            mongodb::error::ErrorKind::Bson(cause) => Some(cause.to_string()),
            _ => None,
        };
        if let Some(message) = cause {
            return Error::Encode {
                collection: collection.to_owned(),
                what: "document".to_owned(),
                message,
            };
        }
    }
    let target = || match as_id {
        true => shown.show_as_id(),
        false => shown.show(),
    };
    Error::from_write(collection, target, e)
}

/// The public future of a builder's write: a [`Sending`] whose driver future, reply and
/// output are fixed, named and documented.
macro_rules! write_future {
    ($(#[$doc:meta])* $name:ident<'a $(, $t:ident: $bound:path)?>(
        $action:ty, $settle:ty
    ) -> $out:ty) => {
        $(#[$doc])*
        #[must_use = "futures do nothing unless awaited"]
        pub struct $name<'a $(, $t: $bound)?>(
            $crate::engine::Sending<'a, $crate::engine::DriverFuture<$action>, $settle, $out>,
        );

        impl<'a $(, $t: $bound)?> From<$crate::engine::Sending<
            'a, $crate::engine::DriverFuture<$action>, $settle, $out>> for $name<'a $(, $t)?>
        {
            fn from(
                sending: $crate::engine::Sending<
                    'a, $crate::engine::DriverFuture<$action>, $settle, $out>,
            ) -> Self {
                $name(sending)
            }
        }

        impl<'a $(, $t: $bound)?> From<$crate::engine::BoxFuture<'a, $crate::Result<$out>>>
            for $name<'a $(, $t)?>
        {
            fn from(boxed: $crate::engine::BoxFuture<'a, $crate::Result<$out>>) -> Self {
                $name($crate::engine::Sending::Boxed(boxed))
            }
        }

        impl<'a $(, $t: $bound)?> ::std::future::Future for $name<'a $(, $t)?> {
            type Output = $crate::Result<$out>;

            #[inline]
            fn poll(
                self: ::std::pin::Pin<&mut Self>,
                cx: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<Self::Output> {
                ::std::pin::Pin::new(&mut self.get_mut().0).poll(cx)
            }
        }

        impl<'a $(, $t: $bound)?> ::std::fmt::Debug for $name<'a $(, $t)?> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(stringify!($name))
            }
        }
    };
}
pub(crate) use write_future;
