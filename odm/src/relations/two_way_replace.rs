//! A replacement of a two-way child that changes its parent moves it from the old parent's
//! array to the new one's (see [`super::TwoWayChildren`]).

use bson::{Bson, Document, RawDocument};
use mongodb::options::FindOptions;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::sides::{raw_path, sides, Refusal};
use super::TwoWay;
use crate::document::IdKey;
use crate::engine::{NextReplace, ReplaceCall};
use crate::{Model, Odm, Result};

/// One reference a replacement changes: the parent the stored child names, and the one the
/// replacement names.
struct Change {
    pair: usize,
    old: Option<Bson>,
    new: Option<Bson>,
}

/// The references that `raw` changes, from the stored child (`stored`, `None` when there is
/// none: an upsert's new child).
fn changes(pairs: &[TwoWay], stored: Option<&Document>, raw: &RawDocument) -> Vec<Change> {
    pairs
        .iter()
        .enumerate()
        .filter_map(|(i, pair)| {
            let old = stored
                .and_then(|d| crate::document::get_path(d, &pair.link))
                .filter(|b| !matches!(b, Bson::Null | Bson::Array(_)))
                .cloned();
            let new = raw_path(raw, &pair.link).filter(|b| !matches!(b, Bson::Array(_)));
            (old.as_ref().map(IdKey::of) != new.as_ref().map(IdKey::of)).then_some(Change {
                pair: i,
                old,
                new,
            })
        })
        .collect()
}

pub(super) async fn replace_child<T: Model>(
    mut call: ReplaceCall<'_, T>,
    pairs: Vec<TwoWay>,
    next: NextReplace<T>,
) -> Result<UpdateResult> {
    let odm = call.odm;
    if let Some(session) = call.session.take() {
        let call = call.with_session(Some(session));
        return replace_steps(call, &pairs, next, true, None).await;
    }
    // Read first, outside a transaction: a replacement that keeps the parents is sent as it is.
    let stored = stored_links(odm, &pairs, &call.filter, T::COLLECTION, None).await?;
    if changed(&pairs, stored.as_ref(), &call).is_empty() {
        return next(call).await;
    }
    if odm.supports_transactions().await? {
        let context = (call, pairs);
        return crate::transaction::in_transaction(odm, &context, |odm, session, (call, pairs)| {
            Box::pin(replace_steps(
                call.again(odm, session),
                pairs,
                next,
                true,
                None,
            ))
        })
        .await;
    }
    replace_steps(call, &pairs, next, false, Some(stored)).await
}

/// The references of the stored child the replacement's `filter` matches (`None`: no such
/// child): one `find`.
async fn stored_links(
    odm: &Odm,
    pairs: &[TwoWay],
    filter: &Document,
    collection: &str,
    session: Option<&mut ClientSession>,
) -> Result<Option<Document>> {
    let mut projection = Document::new();
    for pair in pairs {
        projection.insert(pair.link.as_str(), 1);
    }
    let options = FindOptions::builder()
        .projection(projection)
        .limit(1)
        .build();
    let found =
        crate::engine::find_documents(odm, collection, filter.clone(), options, session).await?;
    Ok(found.into_iter().next())
}

/// The references a replacement changes: none when it matches no child and does not upsert
/// (it then reports that it matched nothing).
fn changed<T>(
    pairs: &[TwoWay],
    stored: Option<&Document>,
    call: &ReplaceCall<'_, T>,
) -> Vec<Change> {
    match (stored, call.upsert) {
        (None, false) => Vec::new(),
        _ => changes(pairs, stored, &call.raw),
    }
}

/// A replacement of a two-way child: its stored references read (unless `stored` holds them),
/// the new parents added, the replacement, the old parents pulled; without a transaction
/// (`in_transaction` false), each move settled after as a reassignment's.
async fn replace_steps<T: Model>(
    mut call: ReplaceCall<'_, T>,
    pairs: &[TwoWay],
    next: NextReplace<T>,
    in_transaction: bool,
    stored: Option<Option<Document>>,
) -> Result<UpdateResult> {
    let odm = call.odm;
    let mut session = call.session.take();
    let stored = match stored {
        Some(stored) => stored,
        None => {
            let filter = &call.filter;
            stored_links(odm, pairs, filter, T::COLLECTION, session.as_deref_mut()).await?
        }
    };
    let changes = changed(pairs, stored.as_ref(), &call);
    if changes.is_empty() {
        return next(call.with_session(session)).await;
    }
    let child = call.id.clone();
    let refusal = Refusal {
        missing: "the parent the replacement names",
        full: "the parent is full; nothing was replaced",
    };
    let mut added = Vec::new();
    for change in &changes {
        let Some(new) = &change.new else { continue };
        let sides = sides(odm, &pairs[change.pair]);
        let outcome = sides
            .add(
                std::slice::from_ref(&child),
                new,
                &refusal,
                session.as_deref_mut(),
            )
            .await;
        if let Err(e) = outcome {
            if !in_transaction {
                take_back(odm, pairs, &added, &child).await;
            }
            return Err(e);
        }
        added.push(change);
    }
    let result = next(call.with_session(session.as_deref_mut())).await;
    let replaced = match &result {
        Ok(r) => r.matched_count > 0 || r.upserted_id.is_some(),
        Err(_) => false,
    };
    if !replaced {
        // The child went away meanwhile, or the replacement failed: the additions taken back.
        match (in_transaction, &result) {
            (true, Err(_)) => {}
            (true, Ok(_)) => {
                for change in &added {
                    if let Some(new) = &change.new {
                        sides(odm, &pairs[change.pair])
                            .pull(vec![child.clone()], new, session.as_deref_mut())
                            .await?;
                    }
                }
            }
            (false, _) => take_back(odm, pairs, &added, &child).await,
        }
        return result;
    }
    for change in &changes {
        let sides = sides(odm, &pairs[change.pair]);
        if let Some(old) = &change.old {
            sides
                .pull(vec![child.clone()], old, session.as_deref_mut())
                .await?;
        }
        if let (false, Some(new)) = (in_transaction, &change.new) {
            sides.settle(&child, new, change.old.as_ref()).await?;
        }
    }
    result
}

/// Without a transaction, after a refused or failed replacement: the child pulled again from
/// the new parents it was added to (best effort: the error being returned is the write's).
async fn take_back(odm: &Odm, pairs: &[TwoWay], added: &[&Change], child: &Bson) {
    for change in added {
        if let Some(new) = &change.new {
            let _ = sides(odm, &pairs[change.pair])
                .pull(vec![child.clone()], new, None)
                .await;
        }
    }
}
