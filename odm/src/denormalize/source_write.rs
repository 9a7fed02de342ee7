//! A write of a source of copies, and the one place that chooses how its copies follow: those
//! cascaded in the background are recorded with the write (see `background`), the others are
//! cascaded now (see `cascade`). A cycle of copies is refused here, before the copies are
//! written.

use bson::{Bson, Document, RawDocumentBuf};
use mongodb::options::ReturnDocument;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::{background, cascade, CopyInfo};
use crate::engine::{ModifyCall, NextModify};
use crate::transaction::TransactionMode;
use crate::{Error, Model, Odm, Result};

pub(super) fn encode_error<T: Model>(e: bson::error::Error) -> Error {
    Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document".to_owned(),
        message: e.to_string(),
    }
}

/// Updates the sources matching `filter` and every copy of the fields the update writes: with
/// a background copy among them, the update and its intent (see `background`), else the
/// cascade now (its commands are those of `cascade::update_now`).
pub(crate) async fn cascade_update<T: Model>(
    odm: &Odm,
    filter: Document,
    update: Document,
    copies: Vec<CopyInfo>,
    many: bool,
    mode: TransactionMode,
    session: Option<&mut ClientSession>,
) -> Result<UpdateResult> {
    super::graph::refuse_cycles(odm.catalog(), &copies)?;
    if background::any(&copies) {
        return background::update_and_record::<T>(
            odm, filter, update, copies, many, mode, session,
        )
        .await;
    }
    cascade::update_now::<T>(odm, filter, update, copies, many, mode, session).await
}

/// Replaces one source document and cascades the copied fields the replacement changes: with a
/// background copy among them, the replacement and its intent, else the cascade now (its
/// commands are those of `cascade::replace_now`).
pub(crate) async fn replace_source<T: Model>(
    odm: &Odm,
    filter: Document,
    replacement: Document,
    upsert: bool,
    copies: Vec<CopyInfo>,
    session: Option<&mut ClientSession>,
) -> Result<UpdateResult> {
    super::graph::refuse_cycles(odm.catalog(), &copies)?;
    if background::any(&copies) {
        return background::replace_and_record::<T>(
            odm,
            filter,
            replacement,
            upsert,
            copies,
            session,
        )
        .await;
    }
    cascade::replace_now::<T>(odm, filter, replacement, upsert, copies, session).await
}

/// After one source document was written by a command other than the cascading update (a
/// find-and-modify): the intent of its background copies, then the others cascaded from the
/// document as it now is (`after`, or read back by `id`), converging outside a session.
///
/// Commands: one `update` of the intent when a copy is cascaded in the background; then those
/// of `cascade::after_write_now`. Traced as the step `cascade` of the operation: the source's
/// own write is not in it.
pub(crate) async fn cascade_source_write(
    odm: &Odm,
    source: &'static str,
    id: Bson,
    after: Option<Document>,
    copies: Vec<CopyInfo>,
    mut session: Option<&mut ClientSession>,
) -> Result<()> {
    if copies.is_empty() {
        return Ok(());
    }
    let follow = async move {
        super::graph::refuse_cycles(odm.catalog(), &copies)?;
        let copies = match background::any(&copies) {
            true => {
                let s = session.as_deref_mut();
                background::record_after_write(odm, source, &id, &copies, s).await?;
                copies.into_iter().filter(|c| !c.background).collect()
            }
            false => copies,
        };
        cascade::follow_ups(odm, source, id, after, copies, session).await
    };
    Box::pin(crate::trace::step!("cascade", source, follow)).await
}

/// A `findAndModify` of fields other models copy, and the copies' updates after it: a
/// background copy's intent commits with the write, both in one transaction of their own (in
/// the caller's session, its transaction holds both); the other copies follow from the document
/// as returned when it is the new one, else read back.
pub(super) async fn modify_with_cascade<T: Model>(
    call: ModifyCall<'_>,
    touched: Vec<CopyInfo>,
    next: NextModify,
) -> Result<Option<RawDocumentBuf>> {
    let mut call = call;
    let odm = call.odm;
    let mut session = call.session.take();
    let return_new = matches!(call.options.return_document, Some(ReturnDocument::After));
    let background = session.is_none() && background::any(&touched);
    let found = if background {
        let filter = crate::positional::filter_for_update(call.filter, &call.update);
        background::find_and_modify_and_record::<T>(
            odm,
            filter,
            call.update,
            call.options,
            &touched,
        )
        .await?
    } else {
        next(call.with_session(session.as_deref_mut())).await?
    };
    // Recorded with the write: what is left to cascade now is the other copies.
    let touched: Vec<_> = match background {
        true => touched.into_iter().filter(|c| !c.background).collect(),
        false => touched,
    };
    if let (Some(raw), false) = (&found, touched.is_empty()) {
        let id = crate::decode::id_of(raw).unwrap_or(Bson::Null);
        let after = match return_new {
            true => Some(Document::try_from(raw.as_ref()).map_err(encode_error::<T>)?),
            false => None,
        };
        cascade_source_write(odm, T::COLLECTION, id, after, touched, session).await?;
    }
    Ok(found)
}
