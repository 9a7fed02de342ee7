//! A tree kept for other programs' writes (see [`crate::engine::Follows`]): a node another
//! program moved (its `parent` or `ancestors` written, or inserted or replaced) has its
//! subtree's ancestors rewritten; a node deleted, and still gone, has its tree's delete rule
//! applied to the nodes below it.

use super::{Malformed, TreeInfo};
use crate::catalog::Catalog;
use crate::engine::{
    Absent, Applied, BadDocument, BoxFuture, Event, Follows, Ids, Interest, Noticed, Op,
};
use crate::{Odm, Result};

/// The trees other programs wrote.
pub(crate) struct TreeFollow;

/// Nodes written and nodes deleted.
#[derive(Default)]
pub(crate) struct Nodes {
    moved: Ids,
    deleted: Ids,
}

/// The tree stored in `collection`, if one of the catalog's models is one.
pub(crate) fn tree_of(catalog: &Catalog, collection: &str) -> Option<TreeInfo> {
    catalog
        .models()
        .iter()
        .filter(|e| e.collection == collection)
        .find_map(|e| e.tree)
}

impl Follows for TreeFollow {
    type Noted = Nodes;
    type Batch = ();
    /// The sweep of each tree, by collection.
    type Swept = Vec<(String, super::TreeReport)>;

    fn interest(catalog: &Catalog, collection: &'static str) -> Interest {
        Interest::All.when(tree_of(catalog, collection).is_some())
    }

    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Nodes,
        _batch: &mut (),
    ) -> Noticed {
        let Some(tree) = tree_of(odm.catalog(), collection) else {
            return Noticed::Nothing;
        };
        if event.op == Op::Delete {
            noted.deleted.add(event.id);
            return Noticed::Deleted;
        }
        if event.touches(tree.parent) || event.touches(tree.ancestors) {
            noted.moved.add(event.id);
            return Noticed::Something;
        }
        Noticed::Nothing
    }

    fn apply<'a>(
        odm: &'a Odm,
        collection: &'static str,
        noted: Nodes,
        absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let Some(info) = tree_of(odm.catalog(), collection) else {
                return Ok(());
            };
            // A node deleted, then inserted again, keeps its subtree.
            let deleted = noted.deleted.absent(absent);
            if !deleted.is_empty() {
                let done = super::after_deleted(odm, collection, info, &deleted).await?;
                out.tree_nodes += done.lifted;
                out.tree_deleted += done.deleted;
                out.violations.extend(done.restricted);
                malformed(collection, done.malformed, out);
            }
            if !noted.moved.list.is_empty() {
                let done = super::repair_moved(odm, collection, info, &noted.moved.list).await?;
                out.tree_nodes += done.nodes;
                out.tree_cycles.extend(done.cycles);
                malformed(collection, done.malformed, out);
            }
            Ok(())
        })
    }

    /// Each watched tree swept and repaired.
    fn lost<'a>(odm: &'a Odm, watched: &'a [&'static str]) -> BoxFuture<'a, Result<Self::Swept>> {
        Box::pin(async move {
            let mut trees = Vec::new();
            for &collection in watched {
                if let Some(info) = tree_of(odm.catalog(), collection) {
                    let report = super::sweep(odm, collection, info, true).await?;
                    trees.push((collection.to_owned(), report));
                }
            }
            Ok(trees)
        })
    }
}

/// Tree nodes of `collection` left as they were, reported as bad documents.
fn malformed(collection: &str, malformed: Vec<Malformed>, out: &mut Applied) {
    for m in malformed {
        let bad = BadDocument {
            collection: collection.to_owned(),
            id: crate::error::show_id(Some(&m.id)),
            path: m.path.to_owned(),
            message: m.message,
        };
        out.bad(bad, "a tree node");
    }
}
