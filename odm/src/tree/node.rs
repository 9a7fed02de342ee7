//! A node's place in its tree as stored (its parent and ancestors), read with the errors that
//! name the document and the field, and the mark that makes a transaction conflict with moves
//! of a node's branch.

use std::collections::HashMap;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::TreeInfo;
use crate::document::IdKey;
use crate::engine::{Effect, Own, Returning};
use crate::model::Model;
use crate::{Error, Odm, Result};

/// Where the ancestor chain's documents go in [`super::Tree::ancestors`]'s aggregation.
pub(crate) const CHAIN: &str = "__odm_chain";

/// The field a transaction sets on a parent, and removes again before committing, so that
/// the parent counts as written by it: a concurrent move of the parent's branch writes the
/// parent too, and one of the two transactions then fails with a write conflict and runs
/// again, instead of both committing with the one reading the parent's old ancestors. Never
/// visible outside the transaction.
pub(crate) const MARK: &str = "__odm_tree_mark";

/// A node's stored place in its tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) id: Bson,
    /// `None` for a root (the field missing or `null`).
    pub(crate) parent: Option<Bson>,
    /// Root first.
    pub(crate) ancestors: Vec<Bson>,
    /// The document as read: its id, place and, when read with [`projection_keyed`], its
    /// shard key's values, which a later write of it names (routed).
    pub(crate) stored: Document,
}

/// `{parent: 1, ancestors: 1}`.
pub(crate) fn projection(info: TreeInfo) -> Document {
    doc! { info.parent: 1, info.ancestors: 1 }
}

/// [`projection`] and the fields of `T`'s shard key, for a node written again later (its
/// mark removed) by a filter that names them.
fn projection_keyed<T: Model>(info: TreeInfo) -> Document {
    let mut p = projection(info);
    crate::catalog::KeyCarrier::new(T::entry().shard_key).project(&mut p);
    p
}

fn malformed(collection: &str, doc: &Document, path: &str, message: impl Into<String>) -> Error {
    Error::Decode {
        collection: collection.to_owned(),
        id: crate::error::show_id(doc.get("_id")),
        path: path.to_owned(),
        message: message.into(),
    }
}

/// The ancestors a stored node lists: an array of ids (an array element that is itself an
/// array is no id).
pub(crate) fn ancestors_of<T: Model>(info: TreeInfo, doc: &Document) -> Result<Vec<Bson>> {
    ancestors_in(T::COLLECTION, info, doc)
}

/// [`ancestors_of`] a node of `collection`.
fn ancestors_in(collection: &str, info: TreeInfo, doc: &Document) -> Result<Vec<Bson>> {
    let path = info.ancestors;
    match doc.get(path) {
        Some(Bson::Array(items)) => {
            if let Some(i) = items
                .iter()
                .position(|b| matches!(b, Bson::Array(_) | Bson::Null))
            {
                return Err(malformed(
                    collection,
                    doc,
                    &format!("{path}.{i}"),
                    format!("an ancestor is a node's id, found {}", items[i]),
                ));
            }
            Ok(items.clone())
        }
        None => Err(malformed(
            collection,
            doc,
            path,
            "missing field: a node lists its ancestors (`[]` for a root)",
        )),
        Some(other) => Err(malformed(
            collection,
            doc,
            path,
            format!("expected an array of the ancestors' ids, found {other}"),
        )),
    }
}

/// The node a stored document describes.
pub(crate) fn parse<T: Model>(info: TreeInfo, doc: &Document) -> Result<Node> {
    parse_in(T::COLLECTION, info, doc)
}

/// [`parse`] a node of `collection`.
pub(crate) fn parse_in(collection: &str, info: TreeInfo, doc: &Document) -> Result<Node> {
    let parent = match doc.get(info.parent) {
        None | Some(Bson::Null) => None,
        Some(Bson::Array(_)) => {
            return Err(malformed(
                collection,
                doc,
                info.parent,
                "expected the parent's id, found an array",
            ))
        }
        Some(id) => Some(id.clone()),
    };
    Ok(Node {
        id: doc.get("_id").cloned().unwrap_or(Bson::Null),
        parent,
        ancestors: ancestors_in(collection, info, doc)?,
        stored: doc.clone(),
    })
}

/// The node with this id: one `find` projecting `parent` and `ancestors`.
pub(crate) async fn read<T: Model>(
    odm: &Odm,
    info: TreeInfo,
    id: &Bson,
    session: Option<&mut ClientSession>,
) -> Result<Option<Node>> {
    let coll = odm.own_database().collection::<Document>(T::COLLECTION);
    let action = coll
        .find_one(crate::literal::eq("_id", id.clone()))
        .projection(projection_keyed::<T>(info));
    let found = crate::engine::send!(action, session).map_err(Odm::driver_error::<T>)?;
    found.as_ref().map(|d| parse::<T>(info, d)).transpose()
}

/// The node with this id, marked in the caller's transaction ([`MARK`]): one `findAndModify`.
pub(crate) async fn mark_one<T: Model>(
    odm: &Odm,
    info: TreeInfo,
    id: &Bson,
    session: &mut ClientSession,
) -> Result<Option<Node>> {
    let filter = crate::engine::by_id_routed::<T>(odm, id, Some(&mut *session)).await?;
    let mark = Own::update(
        T::COLLECTION,
        filter,
        marked(),
        Effect::Derived,
        "tree mark",
    )
    .of::<T>()
    .one()
    .showing(crate::error::show_id(Some(id)));
    let returning = Returning::as_found(projection_keyed::<T>(info));
    let found = odm.modify_own(mark, returning, Some(session)).await?;
    found.as_ref().map(|d| parse::<T>(info, d)).transpose()
}

/// The update marking a node: a field of the ODM's own, so no writer's version moves.
fn marked() -> Document {
    doc! { "$set": { MARK: true } }
}

/// Removes the marks of the nodes `read` (as [`read_many`] or [`mark_one`] returned them): one
/// `update` per [chunk](crate::batch) of them, naming their ids and, for a sharded model, the
/// shard key values read with them (routed).
pub(crate) async fn unmark<T: Model>(
    odm: &Odm,
    read: &[&Node],
    session: &mut ClientSession,
) -> Result<()> {
    let key = crate::catalog::KeyCarrier::new(T::entry().shard_key);
    for chunk in crate::batch::chunks(read.iter().map(|n| n.id.clone()).collect()) {
        let mut filter = match <[Bson; 1]>::try_from(chunk.clone()) {
            Ok([id]) => crate::literal::eq("_id", id),
            Err(chunk) => crate::literal::is_in("_id", chunk),
        };
        let ids: std::collections::HashSet<IdKey> = chunk.iter().map(IdKey::of).collect();
        key.restrict(
            &mut filter,
            read.iter()
                .filter(|n| ids.contains(&IdKey::of(&n.id)))
                .map(|n| &n.stored),
        );
        let unmark = doc! { "$unset": { MARK: "" } };
        let write = Own::update(T::COLLECTION, filter, unmark, Effect::Derived, "tree mark");
        odm.write_own(write.of::<T>(), Some(&mut *session)).await?;
    }
    Ok(())
}

/// The nodes with these ids, by id: one `find` per [chunk](crate::batch) of ids; in the
/// caller's transaction with `mark`, one `update` setting [`MARK`] before each.
pub(crate) async fn read_many<T: Model>(
    odm: &Odm,
    info: TreeInfo,
    ids: &[Bson],
    mark: bool,
    mut session: Option<&mut ClientSession>,
) -> Result<HashMap<IdKey, Node>> {
    if let ([id], true, Some(s)) = (ids, mark, session.as_deref_mut()) {
        let node = mark_one::<T>(odm, info, id, s).await?;
        return Ok(node.map(|n| (IdKey::of(&n.id), n)).into_iter().collect());
    }
    let coll = odm.own_database().collection::<Document>(T::COLLECTION);
    let mut out = HashMap::new();
    for chunk in crate::batch::chunks(ids.to_vec()) {
        let filter = crate::literal::is_in("_id", chunk);
        if let (true, Some(s)) = (mark, session.as_deref_mut()) {
            let mark = Own::update(
                T::COLLECTION,
                filter.clone(),
                marked(),
                Effect::Derived,
                "tree mark",
            );
            odm.write_own(mark.of::<T>(), Some(s)).await?;
        }
        let options = FindOptions::builder()
            .projection(projection_keyed::<T>(info))
            .build();
        let docs: Vec<Document> = match session.as_deref_mut() {
            None => coll
                .find(filter)
                .with_options(options)
                .await
                .map_err(Odm::driver_error::<T>)?
                .try_collect()
                .await
                .map_err(Odm::driver_error::<T>)?,
            Some(s) => {
                let mut cursor = coll
                    .find(filter)
                    .with_options(options)
                    .session(&mut *s)
                    .await
                    .map_err(Odm::driver_error::<T>)?;
                cursor
                    .stream(s)
                    .try_collect()
                    .await
                    .map_err(Odm::driver_error::<T>)?
            }
        };
        for d in &docs {
            let node = parse::<T>(info, d)?;
            out.insert(IdKey::of(&node.id), node);
        }
    }
    Ok(out)
}

/// Whether the ODM should run a tree write in a transaction of its own: the mode, and whether
/// the deployment has them (one `hello`, the first time per `Odm`).
pub(crate) async fn transactional(
    odm: &Odm,
    mode: crate::transaction::TransactionMode,
) -> Result<bool> {
    use crate::transaction::TransactionMode;
    match mode {
        TransactionMode::Never => Ok(false),
        TransactionMode::Always => Ok(true),
        TransactionMode::Auto => odm.supports_transactions().await,
    }
}
