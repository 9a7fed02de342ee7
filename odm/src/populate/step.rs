//! One populate path as the engines see it, and what a fetch hands to the attach: the types the
//! `$in` engine and the lookup plan share.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use bson::{Bson, Document};
use mongodb::ClientSession;

use crate::document::IdKey;
use crate::{Odm, Result};

pub(crate) use crate::engine::BoxFuture;

/// The documents one step fetched, type-erased so that steps on different targets can be
/// fetched together.
#[doc(hidden)]
pub struct Fetched(pub(super) Box<dyn Any + Send>);

impl Fetched {
    pub(super) fn new<T: Send + Sync + 'static>(by_id: ById<T>) -> Self {
        Fetched(Box::new(by_id))
    }
}

impl std::fmt::Debug for Fetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fetched")
    }
}

/// One populate path, as the engine sees it.
#[doc(hidden)]
pub trait Step<Root>: Send + Sync {
    /// The distinct ids the documents reference, in first-seen order.
    fn collect(&self, docs: &mut [Root]) -> Result<Vec<Bson>>;
    /// Fetches (and populates the next levels of) the referenced documents.
    fn fetch<'a>(
        &'a self,
        odm: &'a Odm,
        ids: Vec<Bson>,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Fetched>>;
    /// Puts the fetched documents into the references.
    fn attach(&self, docs: &mut [Root], fetched: Fetched) -> Result<()>;
    /// The stages of the lookup plan that load this path (and its next levels) into the
    /// `index`'th looked-up field.
    fn lookup_stages(&self, index: usize) -> Result<Vec<Document>>;
    /// Puts the documents the lookup plan loaded under `field` of each of `raws` (one per
    /// document of `docs`) into the references.
    fn attach_looked_up(
        &self,
        odm: &Odm,
        docs: &mut [Root],
        raws: &[&bson::RawDocument],
        field: &str,
    ) -> Result<()>;
    /// Levels of this path: 1, plus the deepest of its next levels.
    fn levels(&self) -> usize;
    /// Relations of this path and its next levels.
    fn relations(&self) -> usize;
}

/// The fetched documents by id, with their rank in the requested sort order.
pub(super) struct ById<T> {
    pub(super) docs: HashMap<IdKey, (usize, Arc<T>)>,
}

/// A projection that keeps `_id` (needed to match documents to references).
pub(super) fn with_id(mut projection: Document) -> Document {
    let excluding = projection.iter().any(|(k, v)| {
        k != "_id" && matches!(v, Bson::Int32(0) | Bson::Int64(0) | Bson::Boolean(false))
    });
    if !excluding {
        projection.insert("_id", 1);
    } else {
        projection.remove("_id");
    }
    projection
}
