//! Copies kept right after writes made by other programs (see [`crate::follower`]): the
//! copies of changed sources cascaded from the sources as they are now, and the latest-N arrays
//! of the parents concerned recomputed. Both read the present state and write only what
//! differs from it, so applying them twice, or after an ODM write that already did the same,
//! changes nothing.

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;

use super::{CopyInfo, CopyKind};
use crate::engine::{Effect, Own};
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
/// and returned (naming the source, its `_id` and the field): the other sources are cascaded.
/// A holder the server refuses its copy (it would pass 16 MB, its copy has another shape) is
/// left as it is and returned (naming the holder, its `_id` and the copy's path): the other
/// holders get their copies, each still stale one written by a statement of its own (one
/// `find` of them per source and copy, then one unordered `update` per thousand).
pub(crate) async fn cascade_sources(
    odm: &Odm,
    source: &'static str,
    ids: &[Bson],
    copies: Vec<CopyInfo>,
) -> Result<Vec<Unapplied>> {
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
            Err(e) => bad.push(Unapplied::from(e)),
            Ok(copies) => {
                if differs_somewhere(odm, &copies, &value).await? {
                    stale.push(value);
                }
            }
        }
    }
    if !stale.is_empty() {
        match super::cascade::cascade_then_converge(odm, source, &now, stale.clone()).await {
            Ok(()) => {}
            Err(e) => bad.extend(refused_holders(odm, &now, &stale, e).await?),
        }
    }
    Ok(bad)
}

/// A document the follower could not apply: its collection, its `_id` as the shell prints it,
/// the field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unapplied {
    pub(crate) collection: String,
    pub(crate) id: String,
    pub(crate) path: String,
    pub(crate) message: String,
}

impl From<crate::Error> for Unapplied {
    fn from(e: crate::Error) -> Self {
        match e {
            crate::Error::Decode {
                collection,
                id,
                path,
                message,
            } => Unapplied {
                collection,
                id,
                path,
                message,
            },
            crate::Error::CopiesNotUpdated {
                collection,
                path,
                filter,
                failures,
            } => Unapplied {
                collection,
                id: filter,
                path,
                message: failures
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            },
            other => Unapplied {
                collection: String::new(),
                id: String::new(),
                path: String::new(),
                message: other.to_string(),
            },
        }
    }
}

/// Holders per `update` command when they are written one statement each.
const ONE_BY_ONE: usize = 1_000;

/// After a cascade of `sources` into `copies` failed with `error`: when the server refused
/// updates of copies (and nothing else went wrong), the holders still stale are written one
/// statement each, so that one holder the server refuses (past 16 MB) keeps no other from its
/// copy, and the holders refused are returned. Any other error is returned as it is.
///
/// Commands: per source and copy, one `find` of the holders whose copy differs (projecting
/// `_id`), then one unordered `update` per [`ONE_BY_ONE`] of them.
async fn refused_holders(
    odm: &Odm,
    copies: &[CopyInfo],
    sources: &[Document],
    error: crate::Error,
) -> Result<Vec<Unapplied>> {
    let failures = match error {
        e @ crate::Error::CopiesNotUpdated { .. } => vec![e],
        crate::Error::Incomplete(all)
            if all
                .iter()
                .all(|e| matches!(e, crate::Error::CopiesNotUpdated { .. })) =>
        {
            all
        }
        other => return Err(other),
    };
    let mut out = Vec::new();
    for source in sources {
        let Some(id) = source.get("_id") else {
            continue;
        };
        for copy in copies.iter().filter(|c| c.is_source(source)) {
            let Ok(values) = copy.values_of(source) else {
                continue;
            };
            out.extend(write_one_by_one(odm, copy, id, values).await?);
        }
    }
    // A refusal below the first level (a copy of a copy) is reported as the server gave it.
    for f in failures {
        if let crate::Error::CopiesNotUpdated {
            collection, path, ..
        } = &f
        {
            if copies
                .iter()
                .any(|c| c.dependent == collection.as_str() && c.path == *path)
            {
                continue;
            }
        }
        out.push(Unapplied::from(f));
    }
    Ok(out)
}

/// Writes the copy `copy` of the source `id` (`values`) into each holder whose copy still
/// differs, one statement each; returns the holders the server refused.
async fn write_one_by_one(
    odm: &Odm,
    copy: &CopyInfo,
    id: &Bson,
    values: Vec<(String, Bson)>,
) -> Result<Vec<Unapplied>> {
    let differs = copy.differs(id, &values);
    let options = FindOptions::builder().projection(doc! { "_id": 1 }).build();
    let holders: Vec<Bson> =
        crate::engine::find_documents(odm, copy.dependent, differs.clone(), options, None)
            .await?
            .iter()
            .filter_map(|d| d.get("_id").cloned())
            .collect();
    let set: Document = values.into_iter().collect();
    let Some((update, options)) = super::values::copy_update(copy, set, std::slice::from_ref(id))
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for chunk in holders.chunks(ONE_BY_ONE) {
        let writes = chunk.iter().map(|h| {
            let q = doc! { "$and": [crate::literal::eq("_id", h.clone()), differs.clone()] };
            let write = Own::update(
                copy.dependent,
                q,
                update.clone(),
                Effect::Derived,
                "copy repair",
            );
            match &options.array_filters {
                Some(filters) => write.array_filters(filters.clone()).one(),
                None => write.one(),
            }
        });
        let written = odm
            .write_own_all(writes.collect(), false, &copy.path, None)
            .await?;
        for refused in written.refused {
            let Some(holder) = chunk.get(refused.index) else {
                continue;
            };
            let code = refused.code;
            let message = refused.message;
            out.push(Unapplied {
                collection: copy.dependent.to_owned(),
                id: crate::error::show_id(Some(holder)),
                path: copy.path.clone(),
                message: format!(
                    "the copy of `{}` {} was refused ({message}, code {code}); the holder was left as it is",
                    copy.source,
                    crate::error::show_id(Some(id)),
                ),
            });
        }
    }
    Ok(out)
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
/// parents the sources now name. Returns how many parents were recomputed, and the sources
/// left out of every array: a value the summary's type cannot hold (another program wrote
/// it), returned as its [`Error::Decode`](crate::Error::Decode); nothing of such a source is
/// copied.
///
/// Commands: one `find` of the parents listing the ids and one `find` of the sources per
/// [chunk](crate::batch) of ids, then one `aggregate` (one more when a summary is refused) and
/// one `update` per parent (in a transaction when the deployment has them).
pub(crate) async fn refresh_latest_of(
    odm: &Odm,
    copy: &CopyInfo,
    ids: &[Bson],
) -> Result<(u64, Vec<crate::Error>)> {
    let CopyKind::Latest { .. } = &copy.kind else {
        return Ok((0, Vec::new()));
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
    let refused = super::refresh_latest(odm, copy, parents, None).await?;
    Ok((n, refused))
}

/// The cascaded copies (not latest-N arrays) taken from `source` that a change of `paths`
/// touches (`None`: the whole document was written, every copy).
pub(crate) fn cascaded_touched(odm: &Odm, source: &str, paths: Option<&[String]>) -> Vec<CopyInfo> {
    let paths: Option<Vec<&str>> = paths.map(|p| p.iter().map(String::as_str).collect());
    super::touched_by_paths(odm.catalog(), source, None, paths.as_deref())
}

/// The latest-N arrays taken from `source` that a change of `paths` may enter, move or leave
/// (`None`: the whole document was written, every one: the empty path, as `latest_touched`
/// takes a replacement).
pub(crate) fn latest_touched_by(
    odm: &Odm,
    source: &str,
    paths: Option<&[String]>,
) -> Vec<CopyInfo> {
    let paths: Vec<&str> = match paths {
        Some(paths) => paths.iter().map(String::as_str).collect(),
        None => vec![""],
    };
    super::latest_touched(odm.catalog(), source, &paths)
}
