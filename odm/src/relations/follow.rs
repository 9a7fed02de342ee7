//! Two-way references kept right after another program moved a child (wrote its reference
//! without the parents' arrays), inserted or replaced one, or deleted one (see
//! [`crate::follower`]). The child's reference is the source of truth, as for
//! [`Odm::reassign`](crate::Odm::reassign): the child is added to the array of the parent it
//! names and pulled from every other parent's. Each statement matches only where it changes
//! something, so applying it twice changes nothing.

use std::collections::HashMap;

use bson::{doc, Bson};
use mongodb::options::FindOptions;

use crate::catalog::{Catalog, RefKind};
use crate::document::IdKey;
use crate::engine::{Effect, Own};
use crate::{Odm, Result};

/// One two-way reference: the children's reference and the parents' array listing them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TwoWay {
    /// The children's collection.
    pub(crate) child: &'static str,
    /// The children's reference to their parent.
    pub(crate) link: String,
    /// The parents' collection.
    pub(crate) parent: &'static str,
    /// The parents' array of children.
    pub(crate) array: String,
    /// The array's declared bound.
    pub(crate) max: Option<u32>,
}

/// The two-way references whose children live in `child`, declared on either side (DBRefs
/// left out).
pub(crate) fn two_way_of(catalog: &Catalog, child: &str) -> Vec<TwoWay> {
    let mut out: Vec<TwoWay> = Vec::new();
    for entry in catalog.models() {
        for r in (entry.references)() {
            let (Some(inverse), None) = (r.inverse.clone(), r.dbref) else {
                continue;
            };
            let pair = if r.kind == RefKind::Many {
                TwoWay {
                    child: r.to,
                    link: inverse,
                    parent: r.from,
                    array: r.path.clone(),
                    max: r.max,
                }
            } else {
                let max = catalog
                    .references_to(r.from)
                    .iter()
                    .find(|a| a.from == r.to && a.path == inverse)
                    .and_then(|a| a.max);
                TwoWay {
                    child: r.from,
                    link: r.path.clone(),
                    parent: r.to,
                    array: inverse,
                    max,
                }
            };
            if pair.child == child && !out.iter().any(|p| p.link == pair.link) {
                out.push(pair);
            }
        }
    }
    out
}

/// What [`settle`] did.
#[derive(Debug, Default)]
pub(crate) struct Settled {
    /// Parents whose array was written (a child added or pulled).
    pub(crate) parents: u64,
    /// Children whose parent's array is full (its declared bound): `(parent, child)`, the
    /// child left out of it.
    pub(crate) full: Vec<(Bson, Bson)>,
    /// Parents whose array could not take a child (another program stored something else
    /// than an array there): the parent's `_id` and the server's message.
    pub(crate) malformed: Vec<(Bson, String)>,
}

/// Lists each of the children `ids` (as they are now) in the array of the parent its
/// reference names and pulls it from every other parent's; a child that no longer exists is
/// pulled from every array. A child its parent's bounded array has no room for is left in the
/// arrays that list it (listed by a parent too many, as an interrupted
/// [`Odm::reassign`](crate::Odm::reassign) leaves it, never by none) and returned in
/// [`Settled::full`].
///
/// Commands per [chunk](crate::batch) of ids: one `find` of the children (projecting their
/// reference), one `update` command (unordered) with a statement per child adding it to its
/// parent's array (`$addToSet`, matching only a parent that does not list it and, for a
/// bounded array, has room), then one with a statement per child pulling it from every other
/// parent whose array lists it (`$pull`, `multi`). For a bounded array, one `find` of the
/// parents between the two reads back which children they list; when a parent was full, one
/// `update` tries its children again after the pulls, one `find` reads them back and one
/// `update` pulls those added from their other parents. A child whose parent refused it (its
/// array is not an array) or had no room is not pulled: it stays listed where it was (a
/// parent too many, never none).
pub(crate) async fn settle(odm: &Odm, pair: &TwoWay, ids: &[Bson]) -> Result<Settled> {
    let mut out = Settled::default();
    for chunk in crate::batch::chunks_of(ids) {
        let parent_of = parents_of(odm, pair, chunk.clone()).await?;
        let mut adds = Vec::new();
        // The `(parent, child)` each adding statement is for.
        let mut added: Vec<(Bson, Bson)> = Vec::new();
        for child in &chunk {
            if let Some(parent) = parent_of.get(&IdKey::of(child)) {
                adds.push(add(pair, child, parent));
                added.push((parent.clone(), child.clone()));
            }
        }
        let pulls = |left_out: &[(Bson, Bson)]| -> Vec<Own<'static>> {
            chunk
                .iter()
                .filter(|c| !left_out.iter().any(|(_, l)| IdKey::of(l) == IdKey::of(c)))
                .map(|c| pull(pair, c, parent_of.get(&IdKey::of(c))))
                .collect()
        };
        // The additions, then the pulls of the children added (a child its parent refused
        // stays where it is listed). For a bounded array, the children a full parent left out
        // are kept where they are listed too, tried once more after the pulls (which may have
        // made room), and pulled in turn when added.
        let (modified, refused) = send(odm, adds).await?;
        out.parents += modified;
        let mut kept: Vec<(Bson, Bson)> = Vec::new();
        for (index, message) in refused {
            if let Some((parent, child)) = added.get(index) {
                out.malformed.push((parent.clone(), message));
                kept.push((parent.clone(), child.clone()));
            }
        }
        if pair.max.is_none() {
            out.parents += send(odm, pulls(&kept)).await?.0;
            continue;
        }
        let left_out: Vec<(Bson, Bson)> = unlisted(odm, pair, added.clone())
            .await?
            .into_iter()
            .filter(|(_, c)| !kept.iter().any(|(_, k)| IdKey::of(k) == IdKey::of(c)))
            .collect();
        kept.extend(left_out.iter().cloned());
        out.parents += send(odm, pulls(&kept)).await?.0;
        if left_out.is_empty() {
            continue;
        }
        let again = left_out.iter().map(|(p, c)| add(pair, c, p)).collect();
        out.parents += send(odm, again).await?.0;
        let full = unlisted(odm, pair, left_out.clone()).await?;
        let now_in: Vec<Own<'static>> = left_out
            .iter()
            .filter(|(_, c)| !full.iter().any(|(_, f)| IdKey::of(f) == IdKey::of(c)))
            .map(|(p, c)| pull(pair, c, Some(p)))
            .collect();
        out.parents += send(odm, now_in).await?.0;
        out.full.extend(full);
    }
    Ok(out)
}

/// The statement pulling `child` from every parent's array that lists it but `parent`'s: only
/// arrays that list it are matched, on which a `$pull` cannot fail.
fn pull(pair: &TwoWay, child: &Bson, parent: Option<&Bson>) -> Own<'static> {
    let mut others = doc! { pair.array.as_str(): { "$elemMatch": { "$eq": child.clone() } } };
    if let Some(parent) = parent {
        others.insert("_id", doc! { "$ne": parent.clone() });
    }
    let update = doc! { "$pull": { pair.array.as_str(): child.clone() } };
    Own::update(
        pair.parent,
        others,
        update,
        Effect::Derived,
        "two-way repair",
    )
}

/// The parent each of the children `ids` names (those that exist and name one): one `find`
/// projecting the reference.
async fn parents_of(odm: &Odm, pair: &TwoWay, ids: Vec<Bson>) -> Result<HashMap<IdKey, Bson>> {
    let options = FindOptions::builder()
        .projection(doc! { pair.link.as_str(): 1 })
        .build();
    let filter = crate::literal::is_in("_id", ids);
    let found = crate::engine::find_documents(odm, pair.child, filter, options, None).await?;
    let mut parent_of = HashMap::new();
    for d in &found {
        let (Some(id), Some(p)) = (d.get("_id"), crate::document::get_path(d, &pair.link)) else {
            continue;
        };
        if !matches!(p, Bson::Null | Bson::Array(_)) {
            parent_of.insert(IdKey::of(id), p.clone());
        }
    }
    Ok(parent_of)
}

/// The statement adding `child` to `parent`'s array where it is not, and there is room.
fn add(pair: &TwoWay, child: &Bson, parent: &Bson) -> Own<'static> {
    let mut q = crate::literal::eq("_id", parent.clone());
    q.insert(pair.array.as_str(), doc! { "$ne": child.clone() });
    if let Some(max) = pair.max {
        q.insert(
            format!("{}.{}", pair.array, max.saturating_sub(1)),
            doc! { "$exists": false },
        );
    }
    let update = doc! { "$addToSet": { pair.array.as_str(): child.clone() } };
    Own::update(pair.parent, q, update, Effect::Derived, "two-way repair").one()
}

/// The statements as unordered `update` commands (one, for a chunk of children): the
/// documents they modified, and the statements the server refused (index and message).
async fn send(odm: &Odm, writes: Vec<Own<'static>>) -> Result<(u64, Vec<(usize, String)>)> {
    let all = odm
        .write_own_all(writes, false, "two-way arrays", None)
        .await?;
    let refused = all.refused.into_iter().map(|r| (r.index, r.message));
    Ok((all.modified, refused.collect()))
}

/// Of the `(parent, child)` pairs, those whose parent does not list the child (its array was
/// full): one `find` of the parents, projecting the array.
async fn unlisted(
    odm: &Odm,
    pair: &TwoWay,
    listed: Vec<(Bson, Bson)>,
) -> Result<Vec<(Bson, Bson)>> {
    let parents: Vec<Bson> = listed.iter().map(|(p, _)| p.clone()).collect();
    let options = FindOptions::builder()
        .projection(doc! { pair.array.as_str(): 1 })
        .build();
    let found = crate::engine::find_documents(
        odm,
        pair.parent,
        crate::literal::is_in("_id", parents),
        options,
        None,
    )
    .await?;
    let arrays: HashMap<IdKey, Vec<IdKey>> = found
        .iter()
        .filter_map(|d| {
            let id = d.get("_id")?;
            let list = match crate::document::get_path(d, &pair.array) {
                Some(Bson::Array(a)) => a.iter().map(IdKey::of).collect(),
                _ => Vec::new(),
            };
            Some((IdKey::of(id), list))
        })
        .collect();
    Ok(listed
        .into_iter()
        .filter(|(p, c)| {
            arrays
                .get(&IdKey::of(p))
                .is_some_and(|list| !list.contains(&IdKey::of(c)))
        })
        .collect())
}
