//! The futures the writes resolve through: what `.await` on an [`InsertOne`](super::InsertOne),
//! [`UpdateOp`](super::UpdateOp), [`Replace`](super::Replace) or [`Delete`](super::Delete)
//! polls. For a model no maintainer concerns, each is the driver's own future for the same
//! command, polled in place (no allocation of odm's own); otherwise it holds the maintainers'
//! boxed future.

use mongodb::action;
use mongodb::results::UpdateResult;

use crate::engine::write_future;
use crate::Model;

write_future!(
    /// The future of [`InsertOne`](super::InsertOne): resolves to the document's id.
    InsertOneFuture<'a, T: Model>(action::InsertOne<'a>, crate::engine::Known<T::Id>) -> T::Id
);
write_future!(
    /// The future of [`UpdateOp`](super::UpdateOp): resolves to the driver's `UpdateResult`.
    UpdateFuture<'a>(action::Update<'a>, crate::engine::Same) -> UpdateResult
);
write_future!(
    /// The future of [`Replace`](super::Replace): resolves to the driver's `UpdateResult`.
    ReplaceFuture<'a>(action::ReplaceOne<'a>, crate::engine::Same) -> UpdateResult
);
write_future!(
    /// The future of [`Delete`](super::Delete): resolves to the number of documents deleted.
    DeleteFuture<'a>(action::Delete<'a>, crate::engine::Deleted) -> u64
);
