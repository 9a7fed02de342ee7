//! The filter of a `findAndModify` on a sharded model, routed: the key values of the document
//! it takes, read first when the filter does not pin them. Every feature's writes by `_id`
//! use it, and the shard feature's own.

use bson::{Bson, Document};

use crate::catalog::{pin_key, unpinned};
use crate::Result;

/// `{_id: id}`, and for a sharded model the document's shard key values too, read first (one
/// `find` by `_id`, projecting the key): a `findAndModify` by id is then routed to one shard,
/// where a sharded cluster before MongoDB 7.1 refuses one without the key. Nothing is read for
/// a model without a shard key; a missing document leaves the filter by id alone (the write
/// then finds nothing, as it would have).
pub(crate) async fn by_id_routed<T: crate::Model>(
    odm: &crate::Odm,
    id: &Bson,
    session: Option<&mut mongodb::ClientSession>,
) -> Result<Document> {
    routed::<T>(odm, crate::literal::eq("_id", id.clone()), session).await
}

/// `filter`, and for a sharded model whose key it does not pin, the key values of the document
/// it matches, read first (one `find`, projecting the key) and pinned, so that a
/// `findAndModify` is routed: the write still takes a document matching `filter`. Nothing is
/// read when the model has no shard key or `filter` pins it already.
pub(crate) async fn routed<T: crate::Model>(
    odm: &crate::Odm,
    mut filter: Document,
    session: Option<&mut mongodb::ClientSession>,
) -> Result<Document> {
    let Some(key) = T::entry().shard_key else {
        return Ok(filter);
    };
    if unpinned(&filter, &key).is_empty() {
        return Ok(filter);
    }
    let projection: Document = key
        .fields
        .iter()
        .map(|(f, _)| ((*f).to_owned(), Bson::Int32(1)))
        .collect();
    let coll = odm.own_collection::<T>();
    let action = coll.find_one(filter.clone()).projection(projection);
    let found = crate::engine::send!(action, session).map_err(crate::Odm::driver_error::<T>)?;
    if let Some(found) = found {
        pin_key(&mut filter, &found, &key);
    }
    Ok(filter)
}
