//! The queries of a tree that return a `find` builder (see [`crate::tree`]).

use bson::{Bson, Document};

use crate::ops::Find;
use crate::path::Value;
use crate::query::Filter;
use crate::tree::{Tree, TreeModel};
use crate::Result;

impl<'a, T: TreeModel> Tree<'a, T> {
    fn find(&self, filter: Result<Document>) -> Find<'a, T> {
        let filter = match filter {
            Ok(doc) => Filter::raw(doc),
            Err(e) => Filter::from_parts(
                Document::new(),
                Some(crate::query::Deferred::new(
                    "node id".to_owned(),
                    e.to_string(),
                )),
            ),
        };
        Find::new(self.odm, filter)
    }

    /// The nodes whose parent is `id`: one `find` `{parent: id}` on the `parent_1`
    /// index (plus `getMore`s past the first batch). A builder: sort, limit, project, populate.
    pub fn children(&self, id: impl Value<T::Id>) -> Find<'a, T> {
        let filter = crate::tree::encode_id::<T>("node id", &id)
            .map(|id| crate::literal::eq(T::INFO.parent, id));
        self.find(filter)
    }

    /// Every node below `id`, at any depth (the seed's `find({ancestors: "1920s"})`): one
    /// `find` `{ancestors: id}` on the multikey `ancestors_1` index.
    pub fn descendants(&self, id: impl Value<T::Id>) -> Find<'a, T> {
        let filter = crate::tree::encode_id::<T>("node id", &id)
            .map(|id| crate::literal::eq(T::INFO.ancestors, id));
        self.find(filter)
    }

    /// The nodes without a parent: one `find` `{parent: null}` (a missing parent is
    /// `null` to MongoDB).
    pub fn roots(&self) -> Find<'a, T> {
        self.find(Ok(crate::literal::eq(T::INFO.parent, Bson::Null)))
    }
}
