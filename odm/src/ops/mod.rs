//! The operation builders returned by [`Odm`](crate::Odm). Each is `.await`ed to run.

mod bulk;
mod count;
mod delete;
mod encode;
mod find;
mod find_one;
mod find_one_and_delete;
mod find_one_and_replace;
mod find_one_and_update;
mod futures;
mod insert;
mod replace;
mod stream;
mod update;
mod watch;

pub use crate::engine::InSession;
pub use crate::error::{BulkFailure, BulkWritten};
pub use bulk::Bulk;
pub use count::{Count, EstimatedCount};
pub use delete::Delete;
#[cfg(feature = "testing")]
pub(crate) use encode::encode_document;
pub(crate) use find::FindParts;
pub use find::{Find, FindAs};
pub use find_one::{FindId, FindOne, FindOneAs, IdOnly};
pub use find_one_and_delete::FindOneAndDelete;
pub use find_one_and_replace::FindOneAndReplace;
pub use find_one_and_update::FindOneAndUpdate;
pub use futures::{DeleteFuture, InsertOneFuture, ReplaceFuture, UpdateFuture};
pub use insert::{InsertMany, InsertOne};
pub use replace::Replace;
pub(crate) use stream::Open;
pub use stream::{FindStream, DEFAULT_STREAM_BATCH};
pub use update::UpdateOp;
pub use watch::{Change, ChangeKind, Changes, Watch};

/// Implements `IntoFuture` for a builder, traced as the operation `$name` (see
/// [`crate::trace`]); `$documents` gives the `documents` field from the output.
macro_rules! into_future {
    // A write: `start` builds the command and returns the future that sends it: the driver's
    // own for a plain command (see `engine::Sending`), boxed only when traced.
    ($ty:ident => $out:ty, $name:literal, $documents:expr, start -> $fut:ty) => {
        impl<'a, T: $crate::Model> ::std::future::IntoFuture for $ty<'a, T> {
            type Output = $crate::Result<$out>;
            type IntoFuture = $fut;
            fn into_future(self) -> Self::IntoFuture {
                let span = $crate::trace::operation_span!($name, T::COLLECTION);
                if span.is_disabled() {
                    return self.start().into();
                }
                // Built inside the span: the maintainers open their steps' spans as they take
                // the call.
                let fut = span.in_scope(|| self.start());
                $crate::trace::boxed(span, fut, $documents).into()
            }
        }
    };
    // A read (`$ty<U>` for a builder that decodes into another type `U`): the whole `run`
    // future, made in place in its box.
    ($ty:ident $(<$u:ident>)? => $out:ty, $name:literal, $documents:expr) => {
        impl<'a, T: $crate::Model $(, $u: ::serde::de::DeserializeOwned + Send + 'a)?>
            ::std::future::IntoFuture for $ty<'a, T $(, $u)?>
        {
            type Output = $crate::Result<$out>;
            type IntoFuture =
                ::std::pin::Pin<Box<dyn ::std::future::Future<Output = Self::Output> + Send + 'a>>;
            fn into_future(self) -> Self::IntoFuture {
                let span = $crate::trace::operation_span!($name, T::COLLECTION);
                // Without a subscriber, the box holds the operation itself, made in place.
                if span.is_disabled() {
                    return Box::pin(self.run());
                }
                $crate::trace::boxed(span, self.run(), $documents)
            }
        }
    };
}
pub(crate) use into_future;
