//! The operation builders returned by [`Odm`](crate::Odm). Each is `.await`ed to run.

mod read;
mod write;

pub use read::{Count, Find, FindOne, FindOneAndUpdate};
pub use write::{Delete, InsertMany, InsertOne, Replace, UpdateOp};

/// Implements `IntoFuture` for a builder by boxing its `run` method.
macro_rules! into_future {
    ($ty:ident => $out:ty) => {
        impl<'a, T: $crate::Model> ::std::future::IntoFuture for $ty<'a, T> {
            type Output = $crate::Result<$out>;
            type IntoFuture =
                ::std::pin::Pin<Box<dyn ::std::future::Future<Output = Self::Output> + Send + 'a>>;
            fn into_future(self) -> Self::IntoFuture {
                Box::pin(self.run())
            }
        }
    };
    ($ty:ident<R> => $out:ty) => {
        impl<'a, T: $crate::Model, R: ::serde::de::DeserializeOwned + Send + 'a>
            ::std::future::IntoFuture for $ty<'a, T, R>
        {
            type Output = $crate::Result<$out>;
            type IntoFuture =
                ::std::pin::Pin<Box<dyn ::std::future::Future<Output = Self::Output> + Send + 'a>>;
            fn into_future(self) -> Self::IntoFuture {
                Box::pin(self.run())
            }
        }
    };
}
pub(crate) use into_future;
