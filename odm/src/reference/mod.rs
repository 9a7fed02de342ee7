//! `Ref<T>`: a reference to another model's document, stored exactly as its `_id`.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub mod dbref;
mod expand;
mod slots;
mod target;

pub use dbref::{DbRef, PolyHas, PolyRef};
pub(crate) use expand::expanding;
pub use expand::{expanded, Expanded};
pub use slots::{RefContainer, RefSlots};
pub use target::{NotAModel, RefTarget};

use crate::model::Model;

/// A reference to a document of the model `T`.
///
/// Stored as the referenced `_id` and nothing else, whatever its state in memory: a `Ref`
/// that was populated serializes exactly like one that was not. After
/// [`populate`](crate::ops::Find::populate) it also holds the referenced document, shared (an
/// `Arc`) between every parent that references it.
///
/// Reading a reference that was not populated is never a panic: [`Ref::get`] returns
/// `None`, and [`Ref::loaded`] returns an [`Error::NotPopulated`](crate::Error::NotPopulated).
///
/// `T` is a [`Model`]; the struct itself only asks for [`RefTarget`], so that a `Ref` to
/// anything else is one compile error, at the field, rather than one per use of the type.
pub struct Ref<T: RefTarget> {
    id: T::Id,
    /// The populated document (only a model's `Ref` is ever loaded, and always with a `T`),
    /// held without its type: a `Ref` is then `Send` and `Sync` through its id alone, and the
    /// compiler proving a model `Send` does not follow its references from model to model (a
    /// chain of a hundred models referencing the next overflows its recursion limit).
    doc: Option<Arc<dyn Any + Send + Sync>>,
    _target: PhantomData<fn() -> T>,
}

impl<T: RefTarget> Ref<T> {
    /// The populated document, if any.
    fn document(&self) -> Option<&T> {
        self.doc.as_deref().and_then(|d| d.downcast_ref::<T>())
    }
}

impl<T: Model> Ref<T> {
    /// A reference to the document with this id (not loaded).
    pub fn new(id: T::Id) -> Self {
        Ref {
            id,
            doc: None,
            _target: PhantomData,
        }
    }

    /// A reference to `doc`, loaded with it. `None` when `doc` has no id yet.
    pub fn to(doc: T) -> Option<Self> {
        let id = doc.document_id()?.clone();
        Some(Ref {
            id,
            doc: Some(Arc::new(doc)),
            _target: PhantomData,
        })
    }

    /// The referenced id.
    pub fn id(&self) -> &T::Id {
        &self.id
    }

    /// The referenced document, if this reference was populated.
    pub fn get(&self) -> Option<&T> {
        self.document()
    }

    /// The referenced document, or an error naming the collection and the id when this
    /// reference was not populated.
    pub fn loaded(&self) -> crate::Result<&T> {
        self.document().ok_or_else(|| crate::Error::NotPopulated {
            collection: T::COLLECTION.to_owned(),
            id: format!("{:?}", self.id),
        })
    }

    /// Whether the referenced document is loaded.
    pub fn is_loaded(&self) -> bool {
        self.doc.is_some()
    }

    /// Forgets the loaded document, keeping the id.
    pub fn unload(&mut self) {
        self.doc = None;
    }

    pub(crate) fn set_loaded(&mut self, doc: Arc<T>) {
        self.doc = Some(doc);
    }
}

impl<T: Model> Clone for Ref<T> {
    fn clone(&self) -> Self {
        Ref {
            id: self.id.clone(),
            doc: self.doc.clone(),
            _target: PhantomData,
        }
    }
}

impl<T: RefTarget + fmt::Debug> fmt::Debug for Ref<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.document() {
            Some(doc) => f.debug_tuple("Ref").field(doc).finish(),
            None => f.debug_tuple("Ref").field(&self.id).finish(),
        }
    }
}

/// Two references are equal when they reference the same id, loaded or not.
impl<T: Model> PartialEq for Ref<T>
where
    T::Id: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<T: RefTarget> Serialize for Ref<T> {
    /// The id, as stored; inside [`expanded`], a populated reference's document.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.document() {
            Some(doc) if expanding() => T::serialize_loaded(doc, serializer),
            _ => self.id.serialize(serializer),
        }
    }
}

impl<'de, T: RefTarget> Deserialize<'de> for Ref<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::Id::deserialize(deserializer).map(|id| Ref {
            id,
            doc: None,
            _target: PhantomData,
        })
    }
}
