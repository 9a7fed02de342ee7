//! Replacing a loaded document (`replace_one`, the save of a loaded document).

use bson::Bson;
use mongodb::options::WriteConcern;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::encode::{as_serialized, encode_document};
use super::into_future;
use super::ReplaceFuture;
use crate::engine::write::ReplaceSending;
use crate::engine::{ReplaceCall, Sending};
use crate::pipeline::Route;
use crate::{Error, Model, Odm, Result};

/// Builder returned by [`Odm::replace_one`]. Sends one `update` (a replacement, by `_id`; for
/// a sharded model by `_id` and the replacement's shard key values, so that it is routed to one
/// shard: a replacement that changes the key matches nothing).
///
/// When the model holds copies of other models, they are taken from their sources first, as on
/// insert (one `find` per source collection, and one more after the write outside a session;
/// inside one, a claiming `update` per source collection before the `find`);
/// its latest-N arrays are recomputed after it (one `aggregate`, one `update`; in one
/// transaction with the replacement, then `commitTransaction`, when nothing else copies from
/// the model, it holds no copies and the deployment has transactions).
/// When other models copy from this one, the replacement is one `findAndModify` returning the
/// copied fields as they were, followed by one `update` per copy whose fields changed (and, outside
/// a session, one `find` re-reading this document).
///
/// A model with `#[odm(created_at)]` keeps the stored value: when the struct holds another,
/// the replacement matches nothing, one `find` reads the stored value, and the replacement is
/// sent again with it (see [`crate::versioning`]).
///
/// A child of a two-way reference is read first (one `find` of its reference); a replacement
/// that changes its parent, or upserts a new child, moves it from the old parent's array to the
/// new one's, as [`Odm::reassign`](crate::Odm::reassign) does: in a transaction where the
/// deployment has them (one `find`, one `update` per parent, `commitTransaction`), else in the
/// fixed order (the new parent first, then the replacement, the old parent, and one `update`
/// and one `find` confirming).
#[must_use = "the replace runs when awaited"]
#[derive(Debug)]
pub struct Replace<'a, T> {
    odm: &'a Odm,
    doc: &'a T,
    upsert: bool,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
    extras: Option<Box<crate::engine::Extras>>,
}

impl<'a, T: Model> Replace<'a, T> {
    pub(crate) fn new(odm: &'a Odm, doc: &'a T) -> Self {
        Replace {
            odm,
            doc,
            upsert: false,
            session: None,
            concern: None,
            extras: None,
        }
    }

    /// Inserts the document when no document has its id.
    pub fn upsert(mut self, yes: bool) -> Self {
        self.upsert = yes;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The replacement as one future: offered to the maintainers, else the plain `update`.
    fn start(mut self) -> ReplaceSending<'a> {
        crate::engine::concerned!(return Sending::Boxed, self: Replace.start);
        // Sent as serde writes it, to a model no maintainer concerns: the driver serializes the
        // struct itself, once.
        if let (Some(id), None) = (as_serialized(self.doc), &self.extras) {
            let typed = match crate::pipeline::route::<T>(self.odm) {
                Route::Plain(Some(slot)) => self.odm.typed_collection::<T>(slot),
                _ => None,
            };
            if let Some(coll) = typed {
                return match crate::engine::model_filter(T::id_field().eq(id)) {
                    Ok(filter) => crate::engine::write::replace_typed::<T>(
                        coll,
                        filter,
                        self.doc,
                        id,
                        self.upsert,
                        self.session,
                    ),
                    Err(e) => Sending::failed(e),
                };
            }
        }
        match self.call() {
            Ok(call) => crate::pipeline::replace::<T>(call),
            Err(e) => Sending::failed(e),
        }
    }

    fn call(self) -> Result<ReplaceCall<'a, T>> {
        super::encode::let_checked::<T>(self.odm, &self.extras)?;
        let id = self.doc.document_id().ok_or_else(|| Error::MissingId {
            collection: T::COLLECTION.to_owned(),
        })?;
        let filter = crate::engine::model_filter(T::id_field().eq(id))?;
        let (raw, _) = encode_document(self.doc)?;
        Ok(ReplaceCall {
            odm: self.odm,
            doc: self.doc,
            // As stored: the id field's own serde attributes may write it otherwise than its
            // type alone would.
            id: crate::decode::id_of(&raw).unwrap_or(Bson::Null),
            filter,
            raw,
            upsert: self.upsert,
            session: self.session,
            extras: self.extras,
        })
    }
}

crate::engine::write_options!(Replace, bypass, let);

into_future!(Replace => UpdateResult, "replace_one", |r: &UpdateResult| Some(r.modified_count), start -> ReplaceFuture<'a>);
