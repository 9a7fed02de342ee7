//! Reading documents back: a `find` drained into documents or decoded values, and the filter
//! of a model (restricted to its kind).

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::options::FindOptions;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use crate::document::IdKey;
use crate::{Model, Odm, Result};

/// The option setters every read builder has (`find`, `count`, `aggregate`, ...), writing into
/// the driver's options at `self.$($field).+` (a `FindOptions`, a `CountOptions`, ...), under
/// the driver's names and types (re-exported in [`crate::options`]), forwarded unchanged.
/// `Builder<C>` names the builder's parameters after `'a, T`.
macro_rules! read_options {
    // Every read's: the comment, the time bound, the read concern and preference.
    (@every $ty:ident $(<$($p:ident),*>)?, $($field:ident).+) => {
        impl<'a, T: $crate::Model $($(, $p)*)?> $ty<'a, T $($(, $p)*)?> {
            /// Attaches `comment` to the command, where the profiler, the server's log and
            /// `currentOp` show it.
            pub fn comment(mut self, comment: impl Into<::bson::Bson>) -> Self {
                self.$($field).+.comment = Some(comment.into());
                self
            }

            /// Bounds the time the server spends on the command (`maxTimeMS`); past it the
            /// command fails ([`Error::is_time_limit`](crate::Error::is_time_limit)).
            pub fn max_time(mut self, max: ::std::time::Duration) -> Self {
                self.$($field).+.max_time = Some(max);
                self
            }

            /// The read concern of the command (`majority`: only what a majority of the
            /// replica set acknowledged); the client's otherwise.
            pub fn read_concern(mut self, concern: $crate::options::ReadConcern) -> Self {
                self.$($field).+.read_concern = Some(concern);
                self
            }

            /// Where the command is sent (`secondaryPreferred` for a report); the client's
            /// otherwise. odm's own reads for a write never follow it (see the guide's
            /// "Options, collation and search").
            pub fn read_preference(mut self, preference: $crate::options::ReadPreference) -> Self {
                self.$($field).+.selection_criteria =
                    Some($crate::options::SelectionCriteria::ReadPreference(preference));
                self
            }
        }
    };
    // A query's, besides: the index it uses and how it compares strings.
    ($ty:ident $(<$($p:ident),*>)?, $($field:ident).+) => {
        $crate::engine::read_options!(@every $ty $(<$($p),*>)?, $($field).+);

        impl<'a, T: $crate::Model $($(, $p)*)?> $ty<'a, T $($(, $p)*)?> {
            /// The index the server uses (`hint`), by its name or its keys: the command fails
            /// when there is no such index.
            pub fn hint(mut self, hint: $crate::options::Hint) -> Self {
                self.$($field).+.hint = Some(hint);
                self
            }

            /// Compares strings by `collation`: with `strength: 2`, `"ann@x.org"` matches
            /// `"Ann@X.org"` (an index is used only when it has the same collation).
            pub fn collation(mut self, collation: $crate::options::Collation) -> Self {
                self.$($field).+.collation = Some(collation);
                self
            }
        }
    };
}
pub(crate) use read_options;

/// Runs the driver's cursor `action` on the collection of `$model` (a `find`, an
/// `aggregate`), in `$session` when there is one (an `Option<&mut ClientSession>`), and decodes
/// every document it returns with the [`Reading`](crate::decode::Reading) `$from`: a
/// `Result<Vec<_>>`, the first driver or decoding error ending it. With `@each`, `$each` turns
/// each returned `&RawDocument` into a `Result` of the value instead.
macro_rules! decoded {
    ($action:expr, $session:expr, $from:expr, $model:ty) => {
        $crate::engine::decoded!(@each $action, $session, |raw: &::bson::RawDocument| {
            $crate::decode::decode($from, raw)
        }, $model)
    };
    (@each $action:expr, $session:expr, $each:expr, $model:ty) => {{
        let error = $crate::Odm::driver_error::<$model>;
        let each = $each;
        let mut out = ::std::vec::Vec::new();
        match $session {
            None => {
                let mut cursor = $action.await.map_err(error)?;
                while cursor.advance().await.map_err(error)? {
                    out.push(each(cursor.current())?);
                }
            }
            Some(session) => {
                let mut cursor = $action.session(&mut *session).await.map_err(error)?;
                while cursor.advance(session).await.map_err(error)? {
                    out.push(each(cursor.current())?);
                }
            }
        }
        Ok(out)
    }};
}
pub(crate) use decoded;

/// The filter document of `filter` on `T`, restricted to `T`'s kind when it is one, and to
/// the documents a soft delete has not marked when its deletes are soft.
pub(crate) fn model_filter<T: crate::Model>(
    filter: crate::Filter<T>,
) -> crate::Result<bson::Document> {
    let scope = filter.scope();
    let doc = filter.into_document(T::COLLECTION)?;
    let doc = match T::entry().kind {
        Some(kind) => kind.restrict(doc),
        None => doc,
    };
    Ok(match T::entry().soft_delete {
        Some(field) => soft_deleted(field, scope, doc),
        None => doc,
    })
}

/// `filter` restricted to the documents of `scope` (see [`crate::soft_delete`]): by default
/// those a soft delete has not marked (`field` null or missing), or the marked ones only
/// (`field` not null). The condition comes after the caller's; a filter that already names
/// the field is combined with `$and`, so that it cannot reach the documents of another scope.
pub(crate) fn soft_deleted(
    field: &str,
    scope: crate::query::Scope,
    mut filter: Document,
) -> Document {
    use crate::query::Scope;
    let condition = match scope {
        Scope::All => return filter,
        Scope::Live => crate::literal::eq(field, bson::Bson::Null),
        Scope::Deleted => crate::literal::ne(field, bson::Bson::Null),
    };
    if filter.contains_key(field) {
        return bson::doc! { "$and": [filter, condition] };
    }
    filter.extend(condition);
    filter
}

/// One `find` on the collection of `T` (plus its `getMore`s), every document decoded into `U`
/// straight from the reply's bytes; errors name the collection, the `_id` and the field.
/// The documents of `collection` matching `filter`, as BSON documents, in the caller's session
/// when given: the shape the ODM's own bookkeeping reads (ids, references, copied fields).
/// One `find`, plus `getMore`s.
pub(crate) async fn find_documents(
    odm: &Odm,
    collection: &str,
    filter: Document,
    options: FindOptions,
    session: Option<&mut ClientSession>,
) -> Result<Vec<Document>> {
    let coll = odm.own_database().collection::<Document>(collection);
    let action = coll.find(filter).with_options(options);
    let error = |e| crate::Error::from_driver(collection, e);
    match session {
        None => action
            .await
            .map_err(error)?
            .try_collect()
            .await
            .map_err(error),
        Some(s) => {
            let mut cursor = action.session(&mut *s).await.map_err(error)?;
            cursor.stream(s).try_collect().await.map_err(error)
        }
    }
}

pub(crate) async fn find_decoded<T: Model, U: DeserializeOwned>(
    odm: &Odm,
    filter: Document,
    options: FindOptions,
    session: Option<&mut ClientSession>,
) -> Result<Vec<U>> {
    let coll = odm.raw_collection::<T>();
    let action = coll.find(filter).with_options(options);
    let from = crate::decode::Reading::of::<T>(odm);
    crate::engine::decoded!(action, session, &from, T)
}

/// Of `ids`, those no document of `collection` has: one `find` projecting `_id` per chunk.
pub(crate) async fn missing_in(odm: &Odm, collection: &str, ids: Vec<Bson>) -> Result<Vec<Bson>> {
    let mut found = std::collections::HashSet::new();
    for chunk in crate::batch::chunks_of(&ids) {
        let options = FindOptions::builder().projection(doc! { "_id": 1 }).build();
        let filter = crate::literal::is_in("_id", chunk);
        for d in find_documents(odm, collection, filter, options, None).await? {
            if let Some(id) = d.get("_id") {
                found.insert(IdKey::of(id));
            }
        }
    }
    Ok(ids
        .into_iter()
        .filter(|id| !found.contains(&IdKey::of(id)))
        .collect())
}
