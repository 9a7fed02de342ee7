//! A quota kept in the document it limits: the workshop's exercise 6, "users can recommend at
//! most 10 books", as `{_id: "bob", remaining: 8, books: [3, 10]}`.
//!
//! Taking a unit is one conditional update: it matches only while units remain and the item is
//! not already in the list, and decrements the count as it pushes the item. The server applies
//! it atomically, so concurrent takers can never overdraw the quota or add an item twice.

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use crate::engine::InSession;
use crate::model::Model;
use crate::path::{Field, Value};
use crate::query::Filter;
use crate::update::Update;
use crate::{Error, Odm, Result};

/// The outcome of [`Quota::take`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// One unit was taken and the item added to the list.
    Taken,
    /// The item is already in the list: nothing changed.
    AlreadyGiven,
    /// No unit remains: nothing changed.
    Exhausted,
    /// No document has this `_id`.
    NotFound,
}

/// A quota on a model: a count of units that remain (`remaining`) and the list of items they
/// were spent on (`books`). `Quota::new(UserRecs::remaining(), UserRecs::books())`. Its
/// operations return an [`InSession`]: `.await` it, or `.session(&mut session).await` to run
/// its commands in the caller's session and transaction.
#[derive(Debug)]
pub struct Quota<T, N, E> {
    remaining: Field<T, N>,
    given: Field<T, Vec<E>>,
}

impl<T, N, E> Clone for Quota<T, N, E> {
    fn clone(&self) -> Self {
        Quota {
            remaining: self.remaining.clone(),
            given: self.given.clone(),
        }
    }
}

impl<T: Model, N: crate::path::Numeric, E> Quota<T, N, E> {
    /// The quota counted by the numeric field `remaining`, spent on the items of `given`: each
    /// a field, or the typed paths of an embedded field (`Picks::picks()`), as the model's
    /// accessors return them.
    pub fn new(remaining: impl AsRef<Field<T, N>>, given: impl AsRef<Field<T, Vec<E>>>) -> Self {
        Quota {
            remaining: remaining.as_ref().clone(),
            given: given.as_ref().clone(),
        }
    }

    /// Spends one unit of the document `id` on `item`, unless none remains or `item` was
    /// already given. One `update`:
    /// `{_id: id, remaining: {$gt: 0}, books: {$ne: item}}` (`$nor` of an `$eq` for an
    /// item `$ne` would misread) →
    /// `{$inc: {remaining: -1}, $push: {books: item}}`. When it matches nothing, one `find` of
    /// the document (projected to the two fields) says why; the refusal itself was decided
    /// atomically by the update.
    pub fn take<'a>(
        &'a self,
        odm: &'a Odm,
        id: impl Value<T::Id>,
        item: impl Value<E>,
    ) -> InSession<'a, Taken> {
        let item_bson = self.item(&item);
        let id_doc = T::id_field().eq(id).into_document(T::COLLECTION);
        let push = self.given.push(item);
        InSession::new(
            crate::trace::operation_span!("quota_take", T::COLLECTION),
            move |session| Box::pin(self.take_in(odm, id_doc, item_bson, push, session)),
        )
    }

    async fn take_in(
        &self,
        odm: &Odm,
        id_doc: Result<Document>,
        item_bson: Result<Bson>,
        push: Update<T>,
        mut session: Option<&mut ClientSession>,
    ) -> Result<Taken> {
        let (id_doc, item_bson) = (id_doc?, item_bson?);
        let (remaining, given) = (self.remaining.path(), self.given.path());
        let mut filter = id_doc.clone();
        filter.insert(remaining, doc! { "$gt": 0 });
        filter.extend(crate::literal::ne(given, item_bson.clone()));
        let update = Update::raw(doc! { "$inc": { remaining: -1 } }).and(push);
        let op = odm.update_one(Filter::raw(filter), update);
        let result = match session.as_deref_mut() {
            Some(s) => op.session(s).await,
            None => op.await,
        }?;
        if result.matched_count == 1 {
            return Ok(Taken::Taken);
        }
        let options = FindOptions::builder()
            .projection(doc! { remaining: 1, given: 1 })
            .limit(1)
            .build();
        let found =
            crate::engine::find_documents(odm, T::COLLECTION, id_doc, options, session).await?;
        let Some(doc) = found.into_iter().next() else {
            return Ok(Taken::NotFound);
        };
        let listed = match doc.get(given) {
            Some(Bson::Array(items)) => items.contains(&item_bson),
            _ => false,
        };
        Ok(if listed {
            Taken::AlreadyGiven
        } else {
            Taken::Exhausted
        })
    }

    /// Gives the unit spent on `item` back: one `update`,
    /// `{_id: id, books: item}` → `{$inc: {remaining: 1}, $pullAll: {books:
    /// [item]}}`. Returns whether `item` was in the list.
    pub fn give_back<'a>(
        &'a self,
        odm: &'a Odm,
        id: impl Value<T::Id>,
        item: impl Value<E>,
    ) -> InSession<'a, bool> {
        let item = self.item(&item);
        let id = T::id_field().eq(id);
        InSession::new(
            crate::trace::operation_span!("quota_give_back", T::COLLECTION),
            move |session| {
                Box::pin(async move {
                    let item = item?;
                    let (remaining, given) = (self.remaining.path(), self.given.path());
                    let filter = id & Filter::raw(crate::literal::eq(given, item.clone()));
                    let mut update: Document = crate::literal::pull_all(given, vec![item]);
                    update.insert("$inc", doc! { remaining: 1 });
                    let op = odm.update_one(filter, Update::raw(update));
                    let result = match session {
                        Some(s) => op.session(s).await,
                        None => op.await,
                    }?;
                    Ok(result.matched_count == 1)
                })
            },
        )
    }

    fn item(&self, item: &impl Value<E>) -> Result<Bson> {
        item.to_bson().map_err(|e| Error::Encode {
            collection: T::COLLECTION.to_owned(),
            what: format!("array element for `{}`", self.given.path()),
            message: e.to_string(),
        })
    }
}
