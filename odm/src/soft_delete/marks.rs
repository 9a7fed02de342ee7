//! The holders a soft delete marks with the document they reference, and a restore brings
//! back with it: the references declared `#[reference(on_soft_delete = "mark")]`.
//!
//! A soft delete of a model with such holders reads before it writes: one `find` of the ids
//! the delete marks (the first match only for `delete_one`), then, per rule, one `find` of
//! the live holders' ids when their own model has holders to mark in turn (recursively), and
//! writes, deepest holders first: one `update` (`multi`) per rule, then one `update` of the
//! documents themselves. Every mark of one delete has the same time, taken when the delete
//! starts. A restore of such a model reads the marked documents' ids and times (one `find`),
//! clears their mark (one `update`), then per rule and per distinct time clears the mark of
//! the holders of those ids marked at that very time (one `update`, after one `find` of their
//! ids when their model has holders too). Every command naming ids is sent once per
//! [chunk](crate::batch) of them. Outside a caller's session, on a deployment with
//! transactions, all of it is one transaction the ODM opens (plus `commitTransaction`);
//! without one, the writes come in the order that never shows a live holder of a marked
//! document: a delete marks the holders first, a restore brings the document back first.

use std::collections::HashSet;

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use crate::catalog::{Catalog, OnSoftDelete, RefKind, ReferenceInfo};
use crate::document::IdKey;
use crate::engine::{DeleteCall, Effect, Own};
use crate::query::Scope;
use crate::{Odm, Result};

/// Whether a soft delete of `collection` marks holders (a rule `mark` into it).
pub(crate) fn marks_holders(catalog: &Catalog, collection: &str) -> bool {
    rules(catalog, collection).next().is_some()
}

/// The `mark` rules into `collection`, each with the soft delete's field of its holders (the
/// routing report lists their writes).
pub(crate) fn rules<'c>(
    catalog: &'c Catalog,
    collection: &'c str,
) -> impl Iterator<Item = (&'c ReferenceInfo, &'static str)> + 'c {
    catalog
        .references_to(collection)
        .iter()
        .filter(|r| r.on_soft_delete == OnSoftDelete::Mark)
        .filter_map(move |r| {
            let entry = catalog
                .entry_of(r.from, Some(r.from_type))
                .or_else(|| catalog.entry_of(r.from, None))?;
            Some((r, entry.soft_delete?))
        })
}

/// What a pass does to the holders it reaches: a delete marks the live ones, a restore
/// clears the mark of those marked at the time of the document's own.
#[derive(Clone, Copy)]
enum Pass<'t> {
    Mark,
    Restore(&'t Bson),
}

impl Pass<'_> {
    /// `filter` restricted to the holders this pass writes.
    fn reach(&self, field: &str, filter: Document) -> Document {
        match self {
            Pass::Mark => crate::engine::soft_deleted(field, Scope::Live, filter),
            Pass::Restore(time) => doc! { "$and": [filter, { field: { "$eq": (*time).clone() } }] },
        }
    }
}

/// One write of a pass: the documents of `collection` matching `filter`, whose soft delete's
/// field is `field`.
struct Write {
    collection: &'static str,
    model: &'static str,
    field: &'static str,
    filter: Document,
}

/// The documents holding one of `ids` through `r` (a plain reference or an array of them, a
/// DBRef or an array of DBRefs), of the holder's kind when it is one.
fn holding(r: &ReferenceInfo, ids: Vec<Bson>) -> Document {
    let filter = match r.dbref {
        None => crate::literal::is_in(&r.path, ids),
        Some(target) if r.kind == RefKind::Many => doc! {
            r.path.as_str(): { "$elemMatch": { "$ref": target, "$id": { "$in": ids } } }
        },
        Some(target) => doc! {
            format!("{}.$ref", r.path): target,
            format!("{}.$id", r.path): { "$in": ids },
        },
    };
    match r.from_kind {
        Some(kind) => kind.restrict(filter),
        None => filter,
    }
}

/// The writes of `pass` over the holders of `ids` (documents of `collection`), level by
/// level: the holders of one level are read by id only when they have holders of their own.
/// A document reached twice (a reference cycle) is written once.
async fn walk(
    odm: &Odm,
    collection: &'static str,
    ids: Vec<Bson>,
    pass: Pass<'_>,
    mut session: Option<&mut ClientSession>,
) -> Result<Vec<Write>> {
    let catalog = odm.catalog();
    let mut seen: HashSet<(&'static str, IdKey)> =
        ids.iter().map(|id| (collection, IdKey::of(id))).collect();
    let mut levels = vec![(collection, ids)];
    let mut writes = Vec::new();
    while let Some((collection, ids)) = levels.pop() {
        for (r, field) in rules(catalog, collection) {
            for chunk in crate::batch::chunks(ids.clone()) {
                let filter = pass.reach(field, holding(r, chunk));
                if !marks_holders(catalog, r.from) {
                    writes.push(Write {
                        collection: r.from,
                        model: r.from_type,
                        field,
                        filter,
                    });
                    continue;
                }
                let found = ids_of(odm, r.from, filter, false, session.as_deref_mut()).await?;
                let found: Vec<Bson> = found
                    .into_iter()
                    .filter(|id| seen.insert((r.from, IdKey::of(id))))
                    .collect();
                for chunk in crate::batch::chunks(found.clone()) {
                    writes.push(Write {
                        collection: r.from,
                        model: r.from_type,
                        field,
                        filter: crate::literal::is_in("_id", chunk),
                    });
                }
                if !found.is_empty() {
                    levels.push((r.from, found));
                }
            }
        }
    }
    Ok(writes)
}

/// The ids of what `filter` matches in `collection` (the first match only when `one`): one
/// `find` projecting `_id`.
async fn ids_of(
    odm: &Odm,
    collection: &str,
    filter: Document,
    one: bool,
    session: Option<&mut ClientSession>,
) -> Result<Vec<Bson>> {
    let options = FindOptions::builder()
        .projection(doc! { "_id": 1 })
        .limit(one.then_some(1))
        .build();
    let docs = crate::engine::find_documents(odm, collection, filter, options, session).await?;
    Ok(docs
        .into_iter()
        .filter_map(|mut d| d.remove("_id"))
        .collect())
}

/// `update` (`multi`) of what `filter` matches in `collection`, documents of the model named
/// `model` (whose versions and timestamps move with it); the number modified.
async fn update_all(
    odm: &Odm,
    (collection, model): (&str, &'static str),
    filter: Document,
    update: Document,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let write = Own::update(collection, filter, update, Effect::Owned, "soft delete");
    let written = odm.write_own(write.of_model(model), session).await?;
    Ok(written.modified)
}

/// The soft delete of what the call's filter matches in `root` (its collection and model),
/// marking the holders the rules name: see the module's documentation. Returns the number of
/// documents of `root` marked.
pub(super) async fn mark_with_holders(
    call: DeleteCall<'_>,
    root: (&'static str, &'static str),
    field: &'static str,
) -> Result<u64> {
    let DeleteCall {
        odm,
        filter,
        many,
        session,
        ..
    } = call;
    match session {
        Some(s) => marked(odm, root, field, filter, many, Some(s)).await,
        None if odm.supports_transactions().await? => {
            let context = (root, field, filter, many);
            crate::transaction::in_transaction(odm, &context, |odm, s, c| {
                Box::pin(marked(odm, c.0, c.1, c.2.clone(), c.3, Some(s)))
            })
            .await
        }
        None => marked(odm, root, field, filter, many, None).await,
    }
}

async fn marked(
    odm: &Odm,
    root: (&'static str, &'static str),
    field: &'static str,
    filter: Document,
    many: bool,
    mut session: Option<&mut ClientSession>,
) -> Result<u64> {
    let collection = root.0;
    let live = crate::engine::soft_deleted(field, Scope::Live, filter);
    let ids = ids_of(odm, collection, live, !many, session.as_deref_mut()).await?;
    if ids.is_empty() {
        return Ok(0);
    }
    let time = Bson::DateTime(bson::DateTime::now());
    let writes = walk(
        odm,
        collection,
        ids.clone(),
        Pass::Mark,
        session.as_deref_mut(),
    )
    .await?;
    for w in writes.into_iter().rev() {
        let update = doc! { "$set": { w.field: time.clone() } };
        let to = (w.collection, w.model);
        update_all(odm, to, w.filter, update, session.as_deref_mut()).await?;
    }
    let mut marked = 0;
    for chunk in crate::batch::chunks(ids) {
        let filter = Pass::Mark.reach(field, crate::literal::is_in("_id", chunk));
        let update = doc! { "$set": { field: time.clone() } };
        marked += update_all(odm, root, filter, update, session.as_deref_mut()).await?;
    }
    Ok(marked)
}

/// Clears the mark of what `filter` (already restricted to marked documents) matches in
/// `root` (its collection and model), and of the holders marked with them: see the module's
/// documentation. Returns the number of documents of `root` restored.
pub(super) async fn restore(
    odm: &Odm,
    root: (&'static str, &'static str),
    field: &'static str,
    filter: Document,
    session: Option<&mut ClientSession>,
) -> Result<u64> {
    let collection = root.0;
    let cleared = doc! { "$set": { field: Bson::Null } };
    if !marks_holders(odm.catalog(), collection) {
        return update_all(odm, root, filter, cleared, session).await;
    }
    match session {
        Some(s) => restored(odm, root, field, filter, Some(s)).await,
        None if odm.supports_transactions().await? => {
            let context = (root, field, filter);
            crate::transaction::in_transaction(odm, &context, |odm, s, c| {
                Box::pin(restored(odm, c.0, c.1, c.2.clone(), Some(s)))
            })
            .await
        }
        None => restored(odm, root, field, filter, None).await,
    }
}

async fn restored(
    odm: &Odm,
    root: (&'static str, &'static str),
    field: &'static str,
    filter: Document,
    mut session: Option<&mut ClientSession>,
) -> Result<u64> {
    let collection = root.0;
    let options = FindOptions::builder()
        .projection(doc! { "_id": 1, field: 1 })
        .build();
    let found =
        crate::engine::find_documents(odm, collection, filter, options, session.as_deref_mut())
            .await?;
    // The documents by the time of their mark: the holders marked with them have it too.
    let mut times: Vec<(Bson, Vec<Bson>)> = Vec::new();
    for mut d in found {
        let (Some(id), Some(time)) = (d.remove("_id"), d.remove(field)) else {
            continue;
        };
        match times.iter_mut().find(|(t, _)| *t == time) {
            Some((_, ids)) => ids.push(id),
            None => times.push((time, vec![id])),
        }
    }
    let cleared = |field: &str| doc! { "$set": { field: Bson::Null } };
    let mut restored = 0;
    for (time, ids) in &times {
        for chunk in crate::batch::chunks(ids.clone()) {
            let filter = Pass::Restore(time).reach(field, crate::literal::is_in("_id", chunk));
            restored +=
                update_all(odm, root, filter, cleared(field), session.as_deref_mut()).await?;
        }
    }
    for (time, ids) in &times {
        let pass = Pass::Restore(time);
        let writes = walk(odm, collection, ids.clone(), pass, session.as_deref_mut()).await?;
        for w in writes {
            let update = cleared(w.field);
            let to = (w.collection, w.model);
            update_all(odm, to, w.filter, update, session.as_deref_mut()).await?;
        }
    }
    Ok(restored)
}
