//! Versions and timestamps as a maintainer of the writes (see [`crate::pipeline`]).

use bson::{Bson, RawDocumentBuf};
use mongodb::results::UpdateResult;

use super::{
    check_conflict, check_missed_replace, expect_version, missed, stamp_insert, stamp_replace,
    stamp_update,
};
use crate::catalog::ModelEntry;
use crate::engine::{Command, Effect, Own};
use crate::engine::{
    InsertCall, Maintainer, ModifyCall, NextInsert, NextModify, NextReplace, NextUpdate,
    ReplaceCall, Step, Stepped, UpdateCall,
};
use crate::{Model, Result};
use mongodb::options::UpdateModifications;

/// The kept fields of every write: stamped on inserts, updates and replacements; a write of a
/// loaded document requires its loaded version, and one that matched nothing is told from a
/// conflict (see [`crate::versioning`]).
pub(crate) struct Kept;

impl Maintainer for Kept {
    /// Kept fields, or a schema version (which an upsert writes).
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        let entry = model.entry;
        !entry.stamps.is_none() || entry.schema_version.is_some()
    }

    /// An own write that changes what the document's writers own ([`Effect::Owned`]: a delete
    /// rule's nullify or pull, a reassigned child) moves its version and `updated_at`; one that
    /// keeps derived data in line leaves them.
    fn own(write: &mut Own<'_>, model: &ModelEntry) -> Result<()> {
        if write.effect != Effect::Owned || model.stamps.is_none() {
            return Ok(());
        }
        match &mut write.command {
            Command::Update(UpdateModifications::Document(update)) => {
                super::stamp_follow_up(update, model.stamps)
            }
            Command::Update(UpdateModifications::Pipeline(stages)) => {
                super::stamp_pipeline(stages, model.stamps)
            }
            _ => {}
        }
        Ok(())
    }

    fn insert<'a, T: Model>(
        mut call: InsertCall<'a, T>,
        _next: NextInsert<T>,
    ) -> Stepped<'a, InsertCall<'a, T>, usize> {
        for (doc, raw) in call.docs.iter().zip(call.raws.iter_mut()) {
            stamp_insert(*doc, raw)?;
        }
        Ok(Step::Pass(call))
    }

    fn update<'a, T: Model>(
        mut call: UpdateCall<'a>,
        next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        expect_version::<T>(&mut call.filter, call.loaded.as_ref().map(|l| l.1));
        stamp_update::<T>(&mut call.update, call.upsert)?;
        let loaded = match (T::STAMPS.version, call.loaded.take()) {
            (Some(_), Some(loaded)) => loaded,
            _ => return Ok(Step::Pass(call)),
        };
        Ok(Step::Sent(Box::pin(async move {
            let (id, expected) = *loaded;
            let odm = call.odm;
            let upsert = call.upsert;
            let mut session = call.session.take();
            let written = next(call.with_session(session.as_deref_mut())).await;
            if missed(&written, upsert) {
                check_conflict::<T>(odm, &id, expected, session).await?;
            }
            written
        })))
    }

    fn modify<'a, T: Model>(
        mut call: ModifyCall<'a>,
        _next: NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        stamp_update::<T>(&mut call.update, call.options.upsert == Some(true))?;
        Ok(Step::Pass(call))
    }

    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        if call.doc.stamps().is_none() {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(Box::pin(replace_stamped(call, next))))
    }
}

/// A replacement of a versioned or timestamped document: stamped, sent, and when it missed
/// because the struct's `created_at` is not the stored one, once more with the stored one
/// (which a replacement never changes); a second attempt never asks for a third.
async fn replace_stamped<T: Model>(
    call: ReplaceCall<'_, T>,
    next: NextReplace<T>,
) -> Result<UpdateResult> {
    let mut call = call;
    let mut session = call.session.take();
    let mut keep: Option<Bson> = None;
    let mut first = true;
    loop {
        let mut filter = call.filter.clone();
        let mut raw = call.raw.clone();
        let replacing = stamp_replace(call.doc, &mut filter, &mut raw, keep.take())?;
        let written = next(ReplaceCall {
            odm: call.odm,
            doc: call.doc,
            id: call.id.clone(),
            filter,
            raw,
            upsert: call.upsert,
            session: session.as_deref_mut(),
            extras: call.extras.clone(),
        })
        .await;
        if missed(&written, call.upsert) {
            let kept = check_missed_replace::<T>(
                call.odm,
                call.doc.stamps().version,
                &replacing,
                &call.id,
                session.as_deref_mut(),
            )
            .await?;
            // A second attempt that misses (another program changed `created_at` in between)
            // matched nothing, as any replacement of a changed document.
            if let (Some(kept), true) = (kept, first) {
                keep = Some(kept);
                first = false;
                continue;
            }
        }
        return written;
    }
}
