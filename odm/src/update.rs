//! Typed update documents.

use std::fmt;
use std::marker::PhantomData;

use bson::{Bson, Document};

use crate::array_filters::{rename_path, ArrayFilters};
use crate::path::{Field, Numeric, Optional, Value, Writable};
use crate::query::{encode, encode_owned, Deferred};

/// An update on the model `Root`: `Book::available().set(false).and(Book::pages().inc(1))`.
///
/// Only paths that address one value per document can be written (see
/// [`Single`](crate::path::Single)); `unset` exists only for `Option` fields and `inc` only for
/// numeric ones, so an update that would leave a document undecodable does not compile.
pub struct Update<Root> {
    ops: Document,
    error: Option<Deferred>,
    raw: bool,
    guards: Vec<Guard>,
    /// The conditions of the filtered element paths it writes (`arrayFilters`).
    filters: ArrayFilters,
    _root: PhantomData<fn() -> Root>,
}

impl<Root> Update<Root> {
    fn op<T, M>(op: &str, field: &Field<Root, T, M>, value: Bson, error: Option<Deferred>) -> Self {
        let mut inner = Document::new();
        inner.insert(field.path(), value);
        let mut ops = Document::new();
        ops.insert(op, inner);
        Update {
            ops,
            error,
            raw: false,
            guards: Vec::new(),
            filters: field.array_filters().clone(),
            _root: PhantomData,
        }
    }

    /// An update from a raw document, sent as written. With [`Filter::raw`](crate::Filter::raw)
    /// it is the only way to send operators of your own (`$each`, `$slice`, `$rename`,
    /// positional paths such as `parts.$[p].qty`): never build it from unchecked input.
    ///
    /// It may not write a copy odm keeps, as typed updates may not: an update naming a copied
    /// field or a path inside one under any operator (`$set`, `$unset`, `$inc`, `$push` onto
    /// a latest-N array, `$setOnInsert`, `$currentDate`, ..., including `parts.$[p].name` and
    /// `parts.0.name`), or renaming onto or off a copy with `$rename`, fails with
    /// [`Error::CopyWrite`](crate::Error::CopyWrite) before anything is sent. Whole summaries it
    /// sets or pushes are taken from their sources, as for typed updates. The keys of its
    /// values are not checked (it may hold modifiers).
    pub fn raw(ops: Document) -> Self {
        Update {
            ops,
            error: None,
            raw: true,
            guards: Vec::new(),
            filters: ArrayFilters::new(),
            _root: PhantomData,
        }
    }

    /// Applies `other` too, in the same command. The array filters of both are sent; an
    /// identifier `other` uses for another condition than this update's is renamed in its
    /// paths, and a condition both use is sent once.
    pub fn and(mut self, other: Update<Root>) -> Self {
        if self.error.is_none() {
            self.error = other.error;
        }
        self.raw |= other.raw;
        self.guards.extend(other.guards);
        let renames = self.filters.merge(other.filters);
        let mut other_ops = other.ops;
        if !renames.is_empty() {
            other_ops = other_ops
                .into_iter()
                .map(|(op, fields)| match fields {
                    Bson::Document(d) => (
                        op,
                        Bson::Document(
                            d.into_iter()
                                .map(|(k, v)| (rename_path(&k, &renames), v))
                                .collect(),
                        ),
                    ),
                    other => (op, other),
                })
                .collect();
        }
        for (op, fields) in other_ops {
            match (self.ops.get_mut(&op), fields) {
                (Some(Bson::Document(existing)), Bson::Document(more)) => existing.extend(more),
                (_, fields) => {
                    self.ops.insert(op, fields);
                }
            }
        }
        self
    }

    /// The update document as it will be sent.
    pub fn as_document(&self) -> &Document {
        &self.ops
    }

    /// The `arrayFilters` sent with the update: one per filtered element segment
    /// (`referrers.$[e0].count` needs `{"e0.domain": ...}`), empty when it has none.
    pub fn array_filters(&self) -> Vec<Document> {
        self.filters.documents()
    }

    /// The paths this update writes, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.ops
            .values()
            .filter_map(|v| match v {
                Bson::Document(d) => Some(d.keys().map(String::as_str)),
                _ => None,
            })
            .flatten()
    }

    pub(crate) fn is_raw(&self) -> bool {
        self.raw
    }

    /// The bound checks this update carries (pushes onto bounded arrays).
    pub(crate) fn guards(&self) -> &[Guard] {
        &self.guards
    }

    /// The bound checks this update carries, taken out of it (the update is sent without).
    pub(crate) fn take_guards(&mut self) -> Vec<Guard> {
        std::mem::take(&mut self.guards)
    }

    pub(crate) fn into_document(self, collection: &str) -> crate::Result<Document> {
        if let Some(e) = self.error {
            return Err(e.into_error(collection));
        }
        if let Some((what, message)) = self.filters.error() {
            return Err(crate::Error::Encode {
                collection: collection.to_owned(),
                what: what.clone(),
                message: message.clone(),
            });
        }
        if self.ops.is_empty() {
            return Err(crate::Error::EmptyUpdate {
                collection: collection.to_owned(),
            });
        }
        Ok(self.ops)
    }
}

/// A bound an update must respect at `path`: the filter that holds when the update may go on.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    pub(crate) path: String,
    pub(crate) limit: Limit,
}

/// What a [`Guard`] requires.
#[derive(Debug, Clone)]
pub(crate) enum Limit {
    /// Room for `room` more elements in a bounded array of `max`.
    Room {
        max: u32,
        /// How many elements the update adds (at most `max`).
        room: u32,
        /// For `$addToSet`: the element, which may already be there (then no room is needed).
        element: Option<Bson>,
    },
    /// An `$inc` of `by` on a field of type `ty` holding `min..=max`, which the server would
    /// otherwise carry past the type (storing a 64-bit number that no longer decodes).
    Range {
        ty: &'static str,
        by: i64,
        min: i64,
        max: i64,
    },
}

impl Guard {
    /// The filter that holds when the update may proceed.
    pub(crate) fn filter(&self) -> Document {
        match &self.limit {
            Limit::Room { max, room, element } => {
                // Room for `room` more: no element at index `max - room`.
                let room = match max.checked_sub((*room).max(1)) {
                    None => bson::doc! { "_id": { "$exists": false } },
                    Some(last) => {
                        bson::doc! { format!("{}.{last}", self.path): { "$exists": false } }
                    }
                };
                match element {
                    Some(e) => {
                        bson::doc! { "$or": [room, { self.path.as_str(): { "$eq": e.clone() } }] }
                    }
                    None => room,
                }
            }
            // No stored value the increment would carry out of range (a missing field, which
            // `$inc` sets to `by`, passes). Through an element path, the array's field: every
            // element must have room, since the filter cannot name the one written.
            Limit::Range { by, min, max, .. } => {
                let path: Vec<&str> = self
                    .path
                    .split('.')
                    .filter(|s| !s.starts_with('$'))
                    .collect();
                let path = path.join(".");
                if *by > 0 {
                    bson::doc! { path: { "$not": { "$gt": Bson::Int64(max - by) } } }
                } else {
                    bson::doc! { path: { "$not": { "$lt": Bson::Int64(min - by) } } }
                }
            }
        }
    }
}

impl<Root> Clone for Update<Root> {
    fn clone(&self) -> Self {
        Update {
            ops: self.ops.clone(),
            error: self.error.clone(),
            raw: self.raw,
            guards: self.guards.clone(),
            filters: self.filters.clone(),
            _root: PhantomData,
        }
    }
}

impl<Root> fmt::Debug for Update<Root> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.filters.is_empty() {
            return write!(f, "Update({})", self.ops);
        }
        let filters: Vec<String> = self.array_filters().iter().map(|d| d.to_string()).collect();
        write!(
            f,
            "Update({}, arrayFilters [{}])",
            self.ops,
            filters.join(", ")
        )
    }
}

impl<Root, T, M> Field<Root, T, M> {
    fn value_update(&self, op: &str, value: impl Value<T>) -> Update<Root> {
        let mut error = None;
        let v = encode_owned(
            value,
            || format!("update value for `{}`", self.path()),
            &mut error,
        );
        Update::op(op, self, v, error)
    }

    /// Sets the field (`$set`).
    pub fn set(&self, value: impl Value<T>) -> Update<Root>
    where
        M: Writable,
    {
        self.value_update("$set", value)
    }

    /// Sets the field only when an upsert inserts the document (`$setOnInsert`).
    pub fn set_on_insert(&self, value: impl Value<T>) -> Update<Root>
    where
        M: Writable,
    {
        self.value_update("$setOnInsert", value)
    }

    /// Lowers the field to `value` if `value` is smaller (`$min`).
    pub fn min(&self, value: impl Value<T>) -> Update<Root>
    where
        M: Writable,
    {
        self.value_update("$min", value)
    }

    /// Raises the field to `value` if `value` is larger (`$max`).
    pub fn max(&self, value: impl Value<T>) -> Update<Root>
    where
        M: Writable,
    {
        self.value_update("$max", value)
    }
}

impl<Root, T, M> Field<Root, T, M> {
    /// Removes the field (`$unset`); it reads back as `None`.
    pub fn unset(&self) -> Update<Root>
    where
        T: Optional,
        M: Writable,
    {
        Update::op("$unset", self, Bson::String(String::new()), None)
    }

    /// Adds `by` to the field (`$inc`).
    pub fn inc(&self, by: T::By) -> Update<Root>
    where
        T: Numeric,
        M: Writable,
    {
        let mut error = None;
        let v = encode::<T::By>(
            &by,
            || format!("update value for `{}`", self.path()),
            &mut error,
        );
        let mut update = Update::op("$inc", self, v, error);
        // A narrow integer: the filter keeps the result within the type.
        if let Some((ty, by, min, max)) = T::range(&by).filter(|r| r.1 != 0) {
            update.guards.push(Guard {
                path: self.path().to_owned(),
                limit: Limit::Range { ty, by, min, max },
            });
        }
        update
    }
}

impl<Root, E, M> Field<Root, Vec<E>, M> {
    fn element_update(&self, op: &str, value: &impl Value<E>) -> Update<Root> {
        let mut error = None;
        let v = encode(
            value,
            || format!("array element for `{}`", self.path()),
            &mut error,
        );
        Update::op(op, self, v, error)
    }

    fn guarded(&self, mut update: Update<Root>, add_to_set: bool) -> Update<Root> {
        if let Some(max) = self.max_len() {
            // The guard is a filter on the array's last allowed slot, which an element path
            // (`shelves.$[].books`) does not name: refused rather than left unguarded.
            if self.path().split('.').any(|s| s.starts_with('$')) {
                update.error.get_or_insert(Deferred::new(format!("push onto the bounded array `{}`", self.path()), format!(
                        "a push onto an array bounded to {max} elements through an element path cannot be guarded; push through a filter that selects the document and a path without `$`"
                    )));
                return update;
            }
            let element = if add_to_set {
                update
                    .ops
                    .get_document("$addToSet")
                    .ok()
                    .and_then(|d| d.get(self.path()))
                    .cloned()
            } else {
                None
            };
            update.guards.push(Guard {
                path: self.path().to_owned(),
                limit: Limit::Room {
                    max,
                    room: 1,
                    element,
                },
            });
        }
        update
    }

    /// Appends an element (`$push`). On an array with a declared bound the push is guarded:
    /// the filter also requires room (`{path.N-1: {$exists: false}}`), so a full array is
    /// never grown, atomically, and the operation fails with
    /// [`Error::BoundExceeded`](crate::Error::BoundExceeded).
    pub fn push(&self, value: impl Value<E>) -> Update<Root>
    where
        M: Writable,
    {
        let update = self.element_update("$push", &value);
        self.guarded(update, false)
    }

    /// Appends an element unless an equal one is present (`$addToSet`); guarded like
    /// [`Field::push`] on a bounded array (an element already present is not an overflow).
    pub fn add_to_set(&self, value: impl Value<E>) -> Update<Root>
    where
        M: Writable,
    {
        let update = self.element_update("$addToSet", &value);
        self.guarded(update, true)
    }

    /// Removes every element equal to `value` (`$pull`).
    pub fn pull(&self, value: impl Value<E>) -> Update<Root>
    where
        M: Writable,
    {
        self.element_update("$pull", &value)
    }

    /// Removes the first element (`$pop: -1`).
    pub fn pop_first(&self) -> Update<Root>
    where
        M: Writable,
    {
        Update::op("$pop", self, Bson::Int32(-1), None)
    }

    /// Removes the last element (`$pop: 1`).
    pub fn pop_last(&self) -> Update<Root>
    where
        M: Writable,
    {
        Update::op("$pop", self, Bson::Int32(1), None)
    }
}
