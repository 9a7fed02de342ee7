//! The tree's fields are the ODM's to write: updates that name them are refused, and a
//! replacement keeps the stored ones.

use bson::{Bson, Document, RawDocument};
use mongodb::ClientSession;

use super::{node, TreeInfo};
use crate::document::under;
use crate::model::Model;
use crate::{Error, Odm, Result};

/// Whether `key` is `path` or below it.
/// Refuses an update that writes a tree's `parent` or `ancestors` (or anything inside them, or
/// a whole document holding them): every path an operator names is a write, and so is the
/// new name of a `$rename`. Typed updates of the two fields do not compile; this catches raw
/// ones. Nothing is sent.
pub(crate) fn refuse_tree_writes(
    collection: &str,
    info: TreeInfo,
    update: &Document,
) -> Result<()> {
    let renamed_to = update
        .get_document("$rename")
        .into_iter()
        .flat_map(|f| f.values().filter_map(Bson::as_str));
    let paths = update
        .values()
        .filter_map(Bson::as_document)
        .flat_map(|fields| fields.keys().map(String::as_str))
        .chain(renamed_to);
    for key in paths {
        for field in [info.parent, info.ancestors] {
            if under(key, field) || under(field, key) {
                return Err(Error::TreeWrite {
                    collection: collection.to_owned(),
                    path: key.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// A replacement of a node must not move it: the filter also asks for the parent and the
/// ancestors the replacement holds (`{parent: .., ancestors: {$eq: [..]}}`), so that the
/// stored ones are kept, even against a concurrent move. A replacement that upserts could
/// insert a node whose ancestors were never taken from its parent: refused.
pub(crate) fn guard_replace(
    collection: &str,
    info: TreeInfo,
    filter: &mut Document,
    replacement: &RawDocument,
    upsert: bool,
) -> Result<()> {
    if upsert {
        return Err(Error::Unsupported(format!(
            "a replacement in the tree `{collection}` cannot upsert: insert a new node with `insert_one`, which takes its ancestors from its parent"
        )));
    }
    for field in [info.parent, info.ancestors] {
        let value = replacement
            .get(field)
            .ok()
            .flatten()
            .and_then(|v| Bson::try_from(v).ok())
            .unwrap_or(Bson::Null);
        filter.insert(field, crate::literal::condition(value));
    }
    Ok(())
}

/// After a guarded replacement matched nothing: [`Error::TreeWrite`] when the node exists with
/// another parent or other ancestors than the replacement's, nothing when there is no such
/// node (the replacement then reports 0 matched, as for any model). One `find`.
pub(crate) async fn replace_missed<T: Model>(
    odm: &Odm,
    info: TreeInfo,
    id: &Bson,
    replacement: &RawDocument,
    session: Option<&mut ClientSession>,
) -> Result<()> {
    let Some(stored) = node::read::<T>(odm, info, id, session).await? else {
        return Ok(());
    };
    let given = |field: &str| {
        replacement
            .get(field)
            .ok()
            .flatten()
            .and_then(|v| Bson::try_from(v).ok())
            .filter(|v| *v != Bson::Null)
    };
    let path = if given(info.parent) != stored.parent {
        info.parent
    } else {
        info.ancestors
    };
    Err(Error::TreeWrite {
        collection: T::COLLECTION.to_owned(),
        path: path.to_owned(),
    })
}
