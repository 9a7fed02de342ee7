//! One level of a cascade: new source values written into the copies of them, the updates
//! every cascade, settle and refill ends with (the levels below are `transitive`'s).

use std::collections::BTreeMap;

use bson::{doc, Bson, Document};
use mongodb::options::UpdateOptions;
use mongodb::ClientSession;

use super::{CopyInfo, CopyKind};
use crate::{Error, Odm, Result};

/// The updates of one copy for new source values: one `update_many` per distinct new value
/// and [chunk](crate::batch) of source ids, into the dependents matching `scope` (all of them
/// when `None`). Returns the source ids whose copies were written, with the values written. A
/// value the copy's type cannot decode, or an update refused outside a session, goes into
/// `failures` and the other updates are still sent; in a session an error ends the cascade
/// (the server has aborted the transaction).
pub(super) async fn write_copy(
    odm: &Odm,
    sources: &[Document],
    copy: &CopyInfo,
    scope: Option<&Document>,
    mut session: Option<&mut ClientSession>,
    failures: &mut Failures,
) -> Result<Vec<(Bson, Document)>> {
    // Sources with the same new values share one update.
    let mut groups: BTreeMap<Vec<u8>, (Document, Vec<Bson>)> = BTreeMap::new();
    for source in sources {
        let Some(id) = source.get("_id") else {
            continue;
        };
        // A value the copy's type cannot decode is never copied; the other sources are.
        let set: Document = match copy.values_of(source) {
            Ok(values) => values.into_iter().collect(),
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let key = bson::serialize_to_vec(&set).unwrap_or_default();
        groups
            .entry(key)
            .or_insert_with(|| (set, Vec::new()))
            .1
            .push(id.clone());
    }
    let coll = odm.database().collection::<Document>(copy.dependent);
    // The ids go in the filter and, for arrays, in the array filter: half the budget each.
    let budget = match &copy.kind {
        CopyKind::Summary { array: true, .. } => crate::batch::MAX_IDS_BYTES / 2,
        _ => crate::batch::MAX_IDS_BYTES,
    };
    let groups = groups.into_values().flat_map(|(values, ids)| {
        crate::batch::chunks_within(ids, budget, crate::batch::MAX_IDS)
            .into_iter()
            .map(move |chunk| (values.clone(), chunk))
    });
    // What landed, for the copies of this copy (level after level).
    let mut written = Vec::new();
    for (values, ids) in groups {
        let landed: Vec<(Bson, Document)> =
            ids.iter().map(|id| (id.clone(), values.clone())).collect();
        let filter = within(copy.dependents_of(&ids), scope);
        let Some((update, options)) = copy_update(copy, values, &ids) else {
            continue;
        };
        let action = coll
            .update_many(filter.clone(), update)
            .with_options(options);
        let outcome = crate::ops::send!(action, session.as_deref_mut()).map_err(|e| {
            Error::from_write(copy.dependent, || crate::error::show_filter(&filter), e)
        });
        match outcome {
            Ok(_) => {
                super::record_write(copy);
                written.extend(landed);
            }
            // In a transaction the server has aborted it: nothing more can be written.
            Err(e) if session.is_some() => return Err(e),
            // Outside one, the other dependents are still updated; this one is reported.
            Err(e) => failures.push(Error::CopiesNotUpdated {
                collection: copy.dependent.to_owned(),
                path: copy.path.clone(),
                filter: crate::error::show_filter(&filter),
                failures: vec![e],
            }),
        }
    }
    Ok(written)
}

/// The update writing `values` into the copies of the sources `ids`: array filters for an
/// array of summaries; `None` for a latest-N array, which is recomputed instead.
fn copy_update(
    copy: &CopyInfo,
    values: Document,
    ids: &[Bson],
) -> Option<(Document, UpdateOptions)> {
    Some(match &copy.kind {
        CopyKind::Summary {
            array: true, id, ..
        } => {
            let mut set = Document::new();
            for (to, v) in values {
                set.insert(format!("{}.$[copy].{to}", copy.path), v);
            }
            let options = UpdateOptions::builder()
                .array_filters(vec![crate::literal::is_in(
                    &format!("copy.{id}"),
                    ids.to_vec(),
                )])
                .build();
            (doc! { "$set": set }, options)
        }
        CopyKind::Summary { array: false, .. } => {
            let mut set = Document::new();
            for (to, v) in values {
                set.insert(format!("{}.{to}", copy.path), v);
            }
            (doc! { "$set": set }, UpdateOptions::default())
        }
        CopyKind::Flat { .. } => {
            let v = values
                .into_iter()
                .next()
                .map(|(_, v)| v)
                .unwrap_or(Bson::Null);
            (
                doc! { "$set": { copy.path.as_str(): v } },
                UpdateOptions::default(),
            )
        }
        CopyKind::Latest { .. } => return None,
    })
}

/// Errors met while updating copies, past which the other copies are still updated.
#[derive(Default)]
pub(crate) struct Failures(Vec<Error>);

impl Failures {
    pub(crate) fn push(&mut self, e: Error) {
        self.0.push(e);
    }

    /// `Ok` when nothing failed, the error itself when one thing did, else every error.
    pub(crate) fn into_result(mut self) -> Result<()> {
        match self.0.len() {
            0 => Ok(()),
            1 => Err(self.0.remove(0)),
            _ => Err(Error::Incomplete(self.0)),
        }
    }
}

/// `filter` narrowed to the documents matching `scope` as well: one document when their fields
/// differ, else both under `$and`.
pub(super) fn within(mut filter: Document, scope: Option<&Document>) -> Document {
    let Some(scope) = scope else {
        return filter;
    };
    if scope
        .keys()
        .any(|k| filter.contains_key(k) || k.starts_with('$'))
    {
        return doc! { "$and": [filter, scope.clone()] };
    }
    filter.extend(scope.clone());
    filter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_joins_the_filter_or_sits_beside_it() {
        let scope = doc! { "_id": { "$in": [1, 2] } };
        assert_eq!(
            within(doc! { "parts.id": 7 }, Some(&scope)),
            doc! { "parts.id": 7, "_id": { "$in": [1, 2] } }
        );
        assert_eq!(
            within(doc! { "_id": 7 }, Some(&scope)),
            doc! { "$and": [{ "_id": 7 }, { "_id": { "$in": [1, 2] } }] }
        );
        assert_eq!(within(doc! { "a": 1 }, None), doc! { "a": 1 });
    }
}
