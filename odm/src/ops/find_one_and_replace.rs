//! `find_one_and_replace`: one document replaced and returned, with everything its
//! replacement does.

use bson::RawDocumentBuf;
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::ClientSession;

use super::encode::encode_document;
use super::find_one_and_delete::{raw_of, read_one, read_then_write, with_id, Attempt, Taken};
use super::into_future;
use crate::decode::decode;
use crate::engine::{BoxFuture, Effect, Own, Returning};
use crate::pipeline::Route;
use crate::query::{Filter, Sort};
use crate::{Error, Model, Odm, Result};

/// Builder returned by [`Odm::find_one_and_replace`]; resolves to the document replaced, as it
/// was (or, with [`return_new`](Self::return_new), as it is now), or `None` when no document
/// with the replacement's `_id` matches the filter.
///
/// The replacement keeps its `_id`, so the document replaced is the one with that id, if the
/// filter matches it. For a model no maintainer concerns, sends one `findAndModify` with the
/// replacement. Otherwise the document is read first (one `find`), then replaced as
/// [`Odm::replace_one`] replaces it, with every copy, version and two-way array that keeps
/// (its commands), and with `return_new` read again (one `find`): in one transaction where the
/// deployment has them (plus `commitTransaction`), or in the caller's session; without
/// either, a document changed by another writer between the read and the replacement is read
/// again (up to three times).
#[must_use = "the replacement runs when awaited"]
#[derive(Debug)]
pub struct FindOneAndReplace<'a, T> {
    odm: &'a Odm,
    filter: Filter<T>,
    doc: &'a T,
    sort: Option<bson::Document>,
    after: bool,
    session: Option<&'a mut ClientSession>,
    concern: Option<Box<WriteConcern>>,
}

impl<'a, T: Model> FindOneAndReplace<'a, T> {
    pub(crate) fn new(odm: &'a Odm, filter: Filter<T>, doc: &'a T) -> Self {
        FindOneAndReplace {
            odm,
            filter,
            doc,
            sort: None,
            after: false,
            session: None,
            concern: None,
        }
    }

    /// Which document is taken when several match.
    pub fn sort(mut self, sort: Sort<T>) -> Self {
        self.sort = Some(sort.into_document());
        self
    }

    /// Returns the document as it is after the replacement (`new: true`); by default it is
    /// returned as it was before.
    pub fn return_new(mut self) -> Self {
        self.after = true;
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    async fn run(mut self) -> Result<Option<T>> {
        crate::engine::concerned!(return await, self: FindOneAndReplace.sent);
        self.sent().await
    }

    /// The replacement, on this builder's handle.
    async fn sent(self) -> Result<Option<T>> {
        let id = self.doc.document_id().ok_or_else(|| Error::MissingId {
            collection: T::COLLECTION.to_owned(),
        })?;
        let filter = crate::engine::model_filter(self.filter.and(T::id_field().eq(id)))?;
        let found = match crate::pipeline::route::<T>(self.odm) {
            Route::Plain(_) => {
                let (raw, _) = encode_document(self.doc)?;
                let replacement =
                    bson::Document::try_from(raw.as_ref()).map_err(|e| Error::Encode {
                        collection: T::COLLECTION.to_owned(),
                        what: "the replacement".to_owned(),
                        message: e.to_string(),
                    })?;
                let purpose = "find_one_and_replace";
                let write =
                    Own::replace(T::COLLECTION, filter, replacement, Effect::Owned, purpose)
                        .of::<T>();
                let returning = Returning {
                    sort: self.sort,
                    which: self.after.then_some(ReturnDocument::After),
                    projection: None,
                };
                let found = self.odm.modify_own(write.one(), returning, self.session);
                found.await?.map(raw_of).transpose()?
            }
            Route::Maintained => {
                let replacing = Replacing {
                    taken: Taken {
                        filter,
                        sort: self.sort,
                        _model: std::marker::PhantomData,
                    },
                    doc: self.doc,
                    after: self.after,
                };
                read_then_write(self.odm, &replacing, self.session, replace_attempt::<T>).await?
            }
        };
        found
            .map(|raw| decode(&crate::decode::Reading::of::<T>(self.odm), &raw))
            .transpose()
    }
}

crate::engine::write_options!(@concern FindOneAndReplace);

into_future!(FindOneAndReplace => Option<T>, "find_one_and_replace", |v: &Option<T>| Some(v.is_some().into()));

/// What a maintained replacement takes: the document to find, the replacement, which one is
/// returned.
struct Replacing<'d, T> {
    taken: Taken<T>,
    doc: &'d T,
    after: bool,
}

fn replace_attempt<'s, T: Model>(
    odm: &'s Odm,
    replacing: &'s Replacing<'_, T>,
    session: Option<&'s mut ClientSession>,
) -> BoxFuture<'s, Result<Attempt>> {
    Box::pin(attempt(odm, replacing, session))
}

/// Reads the document, replaces it as `replace_one` would, and reads it again when the new
/// one is returned.
async fn attempt<T: Model>(
    odm: &Odm,
    replacing: &Replacing<'_, T>,
    mut session: Option<&mut ClientSession>,
) -> Result<Attempt> {
    let Some(before) = read_one(odm, &replacing.taken, session.as_deref_mut()).await? else {
        return Ok(Attempt::None);
    };
    let mut replace = super::Replace::new(odm, replacing.doc);
    if let Some(s) = session.as_deref_mut() {
        replace = replace.session(s);
    }
    if replace.await?.matched_count == 0 {
        return Ok(Attempt::Lost);
    }
    if !replacing.after {
        return Ok(Attempt::Done(before));
    }
    let id = crate::decode::id_of(&before).unwrap_or(bson::Bson::Null);
    let again = Taken::<T> {
        filter: with_id(bson::Document::new(), id),
        sort: None,
        _model: std::marker::PhantomData,
    };
    let after: Option<RawDocumentBuf> = read_one(odm, &again, session).await?;
    Ok(after.map_or(Attempt::Lost, Attempt::Done))
}
