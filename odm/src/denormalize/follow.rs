//! Copies kept right after writes made by other programs (see [`crate::follower`]): the
//! copies of changed sources cascaded from the sources as they are now, and the latest-N arrays
//! of the parents concerned recomputed. Both read the present state and write only what
//! differs from it, so applying them twice, or after an ODM write that already did the same,
//! changes nothing.

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;

use super::{CopyInfo, CopyKind};
use crate::{Odm, Result};

/// The copies of `copies` (none a latest-N array) that the documents `ids` of `source` give,
/// cascaded from their current values, then converged as after an ODM write; a copy cascaded
/// in the background gets its intent recorded instead (the cascade worker applies it). A
/// source that no longer exists has nothing to copy.
///
/// Commands: one `find` of the sources per [chunk](crate::batch) of ids; per source and copy,
/// one `find` (limit 1) of a dependent whose copy differs, and for the sources with one, one
/// `update` per copy and one `find` re-reading them; for background copies one `update`
/// recording the intents per source, in a transaction.
///
/// A source holding a value its copy's type cannot decode is left out, its copies as they are,
/// and returned as its [`Error::Decode`](crate::Error::Decode) (naming the source, its `_id`
/// and the field): the other sources are cascaded.
pub(crate) async fn cascade_sources(
    odm: &Odm,
    source: &'static str,
    ids: &[Bson],
    copies: Vec<CopyInfo>,
) -> Result<Vec<crate::Error>> {
    let mut bad = Vec::new();
    if ids.is_empty() || copies.is_empty() {
        return Ok(bad);
    }
    super::graph::refuse_cycles(odm.catalog(), &copies)?;
    let (background, now): (Vec<CopyInfo>, Vec<CopyInfo>) =
        copies.into_iter().partition(|c| c.background);
    for id in ids.iter().filter(|_| !background.is_empty()) {
        super::background::record_after_write(odm, source, id, &background, None).await?;
    }
    if now.is_empty() {
        return Ok(bad);
    }
    let values = super::cascade::read_values(odm, source, ids, &now, None).await?;
    // A source whose copies are all equal to it already (odm's own write, cascaded in its
    // request; an event applied twice) costs one indexed read per copy, not the cascade.
    let mut stale = Vec::new();
    for value in values {
        // Each copy's values, type-checked once: a source one of them cannot take is reported.
        let checked: Result<Vec<_>> = now
            .iter()
            .filter(|c| c.is_source(&value))
            .map(|c| Ok((c, c.values_of(&value)?)))
            .collect();
        match checked {
            Err(e) => bad.push(e),
            Ok(copies) => {
                if differs_somewhere(odm, &copies, &value).await? {
                    stale.push(value);
                }
            }
        }
    }
    if !stale.is_empty() {
        super::cascade::cascade_then_converge(odm, source, &now, stale).await?;
    }
    Ok(bad)
}

/// Whether some dependent holds a copy of `source` (as read) that differs from it: per copy
/// of it (with the values it copies), one `find` (limit 1, projecting `_id`) by the
/// dependents' reference to it.
async fn differs_somewhere(
    odm: &Odm,
    copies: &[(&CopyInfo, Vec<(String, Bson)>)],
    source: &Document,
) -> Result<bool> {
    let Some(id) = source.get("_id") else {
        return Ok(false);
    };
    for (copy, values) in copies {
        let options = FindOptions::builder()
            .projection(doc! { "_id": 1 })
            .limit(1)
            .build();
        let filter = copy.differs(id, values);
        let found =
            crate::engine::find_documents(odm, copy.dependent, filter, options, None).await?;
        if !found.is_empty() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Recomputes the latest-N array `copy` of every parent the sources `ids` are (or were) in:
/// the parents whose array lists one of them (where a deleted or moved source was) and the
/// parents the sources now name. Returns how many parents were recomputed.
///
/// Commands: one `find` of the parents listing the ids and one `find` of the sources per
/// [chunk](crate::batch) of ids, then one `aggregate` and one `update` per parent (in a
/// transaction when the deployment has them).
pub(crate) async fn refresh_latest_of(odm: &Odm, copy: &CopyInfo, ids: &[Bson]) -> Result<u64> {
    let CopyKind::Latest { .. } = &copy.kind else {
        return Ok(0);
    };
    let mut parents: Vec<Bson> = Vec::new();
    for chunk in crate::batch::chunks_of(ids) {
        let listing = crate::literal::is_in(&format!("{}._id", copy.path), chunk.clone());
        let options = FindOptions::builder().projection(doc! { "_id": 1 }).build();
        let found =
            crate::engine::find_documents(odm, copy.dependent, listing, options, None).await?;
        for d in found {
            if let Some(id) = d.get("_id") {
                super::latest::add_parent(&mut parents, id.clone());
            }
        }
        let named = super::parents_of(
            odm,
            copy.source,
            crate::literal::is_in("_id", chunk),
            std::slice::from_ref(copy),
            None,
        )
        .await?;
        for p in named.into_iter().flatten() {
            super::latest::add_parent(&mut parents, p);
        }
    }
    let n = parents.len() as u64;
    super::refresh_latest(odm, copy, parents, None).await?;
    Ok(n)
}

/// The copies taken from `source` that a change of `paths` touches (`None`: the whole document
/// was written, every copy): the cascaded ones and the latest-N ones apart.
pub(crate) fn touched_paths(
    odm: &Odm,
    source: &str,
    paths: Option<&[String]>,
) -> (Vec<CopyInfo>, Vec<CopyInfo>) {
    let all = odm.catalog().copies_from(source);
    let (latest, cascaded): (Vec<&CopyInfo>, Vec<&CopyInfo>) = all
        .iter()
        .partition(|c| matches!(c.kind, CopyKind::Latest { .. }));
    let Some(paths) = paths else {
        return (
            cascaded.into_iter().cloned().collect(),
            latest.into_iter().cloned().collect(),
        );
    };
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let cascaded = cascaded
        .into_iter()
        .filter(|c| refs.iter().any(|p| c.is_touched_by(p)))
        .cloned()
        .collect();
    let latest = super::latest_touched(odm.catalog(), source, &refs);
    (cascaded, latest)
}
