//! Typed update documents.

use std::fmt;
use std::marker::PhantomData;

use bson::{Bson, Document};

use crate::path::{Field, Numeric, Single, Value};
use crate::query::{encode, Deferred};

/// An update on the model `Root`: `Book::available().set(false).and(Book::pages().inc(1))`.
///
/// Only paths that address one value per document can be written (see
/// [`Single`](crate::path::Single)); `unset` exists only for `Option` fields and `inc` only for
/// numeric ones, so an update that would leave a document undecodable does not compile.
pub struct Update<Root> {
    ops: Document,
    error: Option<Deferred>,
    raw: bool,
    _root: PhantomData<fn() -> Root>,
}

impl<Root> Update<Root> {
    fn op(op: &str, path: &str, value: Bson, error: Option<Deferred>) -> Self {
        let mut inner = Document::new();
        inner.insert(path, value);
        let mut ops = Document::new();
        ops.insert(op, inner);
        Update {
            ops,
            error,
            raw: false,
            _root: PhantomData,
        }
    }

    /// An update from a raw document, sent as written. Never build it from unchecked input.
    pub fn raw(ops: Document) -> Self {
        Update {
            ops,
            error: None,
            raw: true,
            _root: PhantomData,
        }
    }

    /// Applies `other` too, in the same command.
    pub fn and(mut self, other: Update<Root>) -> Self {
        if self.error.is_none() {
            self.error = other.error;
        }
        self.raw |= other.raw;
        for (op, fields) in other.ops {
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

    pub(crate) fn into_document(self, collection: &str) -> crate::Result<Document> {
        if let Some(e) = self.error {
            return Err(e.into_error(collection));
        }
        if self.ops.is_empty() {
            return Err(crate::Error::EmptyUpdate {
                collection: collection.to_owned(),
            });
        }
        Ok(self.ops)
    }
}

impl<Root> Clone for Update<Root> {
    fn clone(&self) -> Self {
        Update {
            ops: self.ops.clone(),
            error: self.error.clone(),
            raw: self.raw,
            _root: PhantomData,
        }
    }
}

impl<Root> fmt::Debug for Update<Root> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Update({})", self.ops)
    }
}

impl<Root, T> Field<Root, T, Single> {
    fn value_update(&self, op: &str, value: &impl Value<T>) -> Update<Root> {
        let mut error = None;
        let v = encode(
            value,
            || format!("update value for `{}`", self.path()),
            &mut error,
        );
        Update::op(op, self.path(), v, error)
    }

    /// Sets the field (`$set`).
    pub fn set(&self, value: impl Value<T>) -> Update<Root> {
        self.value_update("$set", &value)
    }

    /// Sets the field only when an upsert inserts the document (`$setOnInsert`).
    pub fn set_on_insert(&self, value: impl Value<T>) -> Update<Root> {
        self.value_update("$setOnInsert", &value)
    }

    /// Lowers the field to `value` if `value` is smaller (`$min`).
    pub fn min(&self, value: impl Value<T>) -> Update<Root> {
        self.value_update("$min", &value)
    }

    /// Raises the field to `value` if `value` is larger (`$max`).
    pub fn max(&self, value: impl Value<T>) -> Update<Root> {
        self.value_update("$max", &value)
    }
}

impl<Root, T> Field<Root, Option<T>, Single> {
    /// Removes the field (`$unset`); it reads back as `None`.
    pub fn unset(&self) -> Update<Root> {
        Update::op("$unset", self.path(), Bson::String(String::new()), None)
    }
}

impl<Root, T: Numeric> Field<Root, T, Single> {
    /// Adds `by` to the field (`$inc`).
    pub fn inc(&self, by: impl Value<T>) -> Update<Root> {
        self.value_update("$inc", &by)
    }
}

impl<Root, E> Field<Root, Vec<E>, Single> {
    fn element_update(&self, op: &str, value: &impl Value<E>) -> Update<Root> {
        let mut error = None;
        let v = encode(
            value,
            || format!("array element for `{}`", self.path()),
            &mut error,
        );
        Update::op(op, self.path(), v, error)
    }

    /// Appends an element (`$push`).
    pub fn push(&self, value: impl Value<E>) -> Update<Root> {
        self.element_update("$push", &value)
    }

    /// Appends an element unless an equal one is present (`$addToSet`).
    pub fn add_to_set(&self, value: impl Value<E>) -> Update<Root> {
        self.element_update("$addToSet", &value)
    }

    /// Removes every element equal to `value` (`$pull`).
    pub fn pull(&self, value: impl Value<E>) -> Update<Root> {
        self.element_update("$pull", &value)
    }

    /// Removes the first element (`$pop: -1`).
    pub fn pop_first(&self) -> Update<Root> {
        Update::op("$pop", self.path(), Bson::Int32(-1), None)
    }

    /// Removes the last element (`$pop: 1`).
    pub fn pop_last(&self) -> Update<Root> {
        Update::op("$pop", self.path(), Bson::Int32(1), None)
    }
}
