//! Shard keys as a maintainer of the writes (see [`crate::pipeline`]): routing, checked before
//! anything is sent.

use bson::RawDocumentBuf;
use mongodb::results::UpdateResult;

use crate::catalog::ModelEntry;
use crate::engine::Own;
use crate::engine::{
    Maintainer, ModifyCall, NextModify, NextReplace, NextUpdate, ReplaceCall, Step, Stepped,
    UpdateCall,
};
use crate::{Model, Result};

/// A sharded model's writes: an upsert whose filter does not pin the whole key is refused (the
/// server could not tell which shard a new document belongs to), and a replacement's filter
/// names the document's key values, so that it is routed to one shard.
pub(crate) struct ShardKeys;

impl Maintainer for ShardKeys {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        let entry = model.entry;
        entry.shard_key.is_some()
    }

    /// An own upsert (a bucket's, a counter's) that cannot be routed is refused, named by
    /// what sends it.
    fn own(write: &mut Own<'_>, model: &ModelEntry) -> Result<()> {
        match (write.upsert, model.shard_key) {
            (true, Some(key)) => {
                super::check_upsert(write.collection, &write.filter, &key, write.purpose)
            }
            _ => Ok(()),
        }
    }

    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        _next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        if let (true, Some(key)) = (call.upsert, T::entry().shard_key) {
            super::check_upsert(T::COLLECTION, &call.filter, &key, "upsert")?;
        }
        Ok(Step::Pass(call))
    }

    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        _next: NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        if let (Some(true), Some(key)) = (call.options.upsert, T::entry().shard_key) {
            super::check_upsert(T::COLLECTION, &call.filter, &key, "findAndModify upsert")?;
        }
        Ok(Step::Pass(call))
    }

    fn replace<'a, T: Model>(
        mut call: ReplaceCall<'a, T>,
        _next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        if let Some(key) = T::entry().shard_key {
            super::pin_key(&mut call.filter, &call.raw, &key);
        }
        Ok(Step::Pass(call))
    }
}
