//! The ODM's own writes of the children of two-way references keep their parents' arrays
//! (see [`TwoWayChildren`]).

use std::collections::HashMap;

use bson::{Bson, Document, RawDocumentBuf};
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::sides::{raw_path, sides, Refusal};
use super::{two_way_of, TwoWay};
use crate::document::{under, IdKey};
use crate::engine::{
    InsertCall, Maintainer, ModifyCall, NextInsert, NextReplace, NextUpdate, ReplaceCall, Step,
    Stepped, UpdateCall,
};
use crate::{Error, Model, Odm, Result};

/// The children of two-way references (`Task.owner: #[parent(inverse = "tasks")]` with
/// `Person.tasks: #[reference(many, inverse = "owner")]`): every write of the ODM that creates
/// a child or changes its parent keeps the parent's array, with the guarantees of
/// [`Odm::reassign`](crate::Odm::reassign).
///
/// - An **insert** (`insert_one`, `insert_many`) adds each child to the array of the parent it
///   names: one `update` per distinct parent (`$addToSet`, with `$each` for several children),
///   its filter asking for room under the array's `max`, then the `insert`. Where the
///   deployment has transactions, all of it in one (`commitTransaction`; concurrent inserts
///   for one parent conflict and run again); inside the caller's session, in it. Without a
///   transaction, in this fixed order: the parents first, then the `insert`, so that an
///   interruption leaves a parent listing a child that is not there, never a child its parent
///   does not list ([`Odm::verify_inverse`](crate::Odm::verify_inverse) repairs it). A parent
///   with no room, or missing, refuses the insert ([`Error::BoundExceeded`],
///   [`Error::NotFound`]) with nothing inserted: in a transaction it is aborted; without one,
///   the parents already written are put back as the children's references say (one `find`
///   of the children and two `update`s, as the follower does), and so are they when the
///   `insert` itself fails.
/// - A **replacement** (`replace_one`, with or without upsert) reads the child's reference
///   first (one `find`); a replacement keeping the parent is then sent as it is. One that
///   changes it (or upserts a new child) adds the child to the new parent (refused as above),
///   sends the replacement and pulls the child from the old parent: in a transaction where
///   the deployment has them (which reads the reference again first); without, in that order,
///   then one `update` adding it again and one `find` confirming, as a reassignment does.
/// - An **update** (`update_one`, `update_many`, `update_by_id`, `update_document`,
///   `find_one_and_update`) that writes the reference, and an upsert whose filter names it
///   (the server would copy it into the new document), is refused before anything is sent
///   ([`Error::TwoWayWrite`]): a move is [`Odm::reassign`](crate::Odm::reassign).
pub(crate) struct TwoWayChildren;

impl Maintainer for TwoWayChildren {
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        model.two_way
    }

    fn insert<'a, T: Model>(
        call: InsertCall<'a, T>,
        next: NextInsert<T>,
    ) -> Stepped<'a, InsertCall<'a, T>, usize> {
        let pairs = two_way_of(call.odm.catalog(), T::COLLECTION);
        let lists = Listing::of(&pairs, &call.raws);
        if lists.is_empty() {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(Box::pin(insert_children(
            call, pairs, lists, next,
        ))))
    }

    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        _next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        let pairs = two_way_of(call.odm.catalog(), T::COLLECTION);
        refuse_link_writes(&pairs, &call.update, call.upsert.then_some(&call.filter))?;
        Ok(Step::Pass(call))
    }

    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        _next: crate::engine::NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        let pairs = two_way_of(call.odm.catalog(), T::COLLECTION);
        let upsert = call.options.upsert.unwrap_or(false);
        refuse_link_writes(&pairs, &call.update, upsert.then_some(&call.filter))?;
        Ok(Step::Pass(call))
    }

    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        let pairs = two_way_of(call.odm.catalog(), T::COLLECTION);
        if pairs.is_empty() {
            return Ok(Step::Pass(call));
        }
        Ok(Step::Sent(Box::pin(super::two_way_replace::replace_child(
            call, pairs, next,
        ))))
    }
}

/// Whether `key` is `path` or below it.
/// Refuses an update that writes a two-way child's reference (any operator naming it, inside
/// it or a document holding it, and the new name of a `$rename`), and an upsert whose filter
/// (`upsert_filter`) names it, which the server would copy into the document it inserts.
fn refuse_link_writes(
    pairs: &[TwoWay],
    update: &Document,
    upsert_filter: Option<&Document>,
) -> Result<()> {
    let renamed_to = update
        .get_document("$rename")
        .into_iter()
        .flat_map(|f| f.values().filter_map(Bson::as_str));
    let written = update
        .values()
        .filter_map(Bson::as_document)
        .flat_map(|fields| fields.keys().map(String::as_str))
        .chain(renamed_to);
    let mut named = Vec::new();
    if let Some(filter) = upsert_filter {
        equalities(filter, &mut named);
    }
    for key in written.chain(named) {
        if let Some(pair) = pairs
            .iter()
            .find(|p| under(key, &p.link) || under(&p.link, key))
        {
            return Err(Error::TwoWayWrite {
                collection: pair.child.to_owned(),
                path: key.to_owned(),
                array: pair.array.clone(),
            });
        }
    }
    Ok(())
}

/// The paths of a filter that an upsert copies into the document it inserts: its top-level
/// fields and those of its `$and`.
fn equalities<'f>(filter: &'f Document, out: &mut Vec<&'f str>) {
    for (key, value) in filter {
        if key == "$and" {
            let clauses = value.as_array().into_iter().flatten();
            for clause in clauses.filter_map(Bson::as_document) {
                equalities(clause, out);
            }
        } else if !key.starts_with('$') {
            out.push(key);
        }
    }
}

/// The children of one insert, by two-way reference and parent, in the order the parents
/// first appear (the order in which they are written).
struct Listing {
    /// `(pair, parent, children)`.
    lists: Vec<(usize, Bson, Vec<Bson>)>,
}

impl Listing {
    fn of(pairs: &[TwoWay], raws: &[RawDocumentBuf]) -> Listing {
        let mut lists: Vec<(usize, Bson, Vec<Bson>)> = Vec::new();
        let mut at: HashMap<(usize, IdKey), usize> = HashMap::new();
        for raw in raws {
            let Some(id) = raw_path(raw, "_id") else {
                continue;
            };
            for (p, pair) in pairs.iter().enumerate() {
                // An array in the reference's place is no parent's id: nothing to list.
                let Some(parent) = raw_path(raw, &pair.link).filter(|p| p.as_array().is_none())
                else {
                    continue;
                };
                let i = *at.entry((p, IdKey::of(&parent))).or_insert_with(|| {
                    lists.push((p, parent, Vec::new()));
                    lists.len() - 1
                });
                lists[i].2.push(id.clone());
            }
        }
        Listing { lists }
    }

    fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// Adds the children to their parents' arrays, in order; the first refusal ends it, after
    /// `done` lists were written.
    async fn add(
        &self,
        odm: &Odm,
        pairs: &[TwoWay],
        mut session: Option<&mut ClientSession>,
    ) -> std::result::Result<(), (usize, Error)> {
        let refusal = Refusal {
            missing: "the parent the child names",
            full: "the parent is full; nothing was inserted",
        };
        for (done, (p, parent, children)) in self.lists.iter().enumerate() {
            sides(odm, &pairs[*p])
                .add(children, parent, &refusal, session.as_deref_mut())
                .await
                .map_err(|e| (done, e))?;
        }
        Ok(())
    }

    /// Without a transaction, after a refusal or a failed `insert`: the parents of the first
    /// `written` lists made to agree with the children's references again (a child that is not
    /// there is pulled, one that was there already stays listed). Per reference: one `find` of
    /// the children and two `update`s (see [`super::settle`]).
    async fn put_back(&self, odm: &Odm, pairs: &[TwoWay], written: usize) -> Result<()> {
        for (p, pair) in pairs.iter().enumerate() {
            let ids: Vec<Bson> = self.lists[..written]
                .iter()
                .filter(|(q, ..)| *q == p)
                .flat_map(|(.., children)| children.iter().cloned())
                .collect();
            if !ids.is_empty() {
                super::settle(odm, pair, &ids).await?;
            }
        }
        Ok(())
    }
}

/// What an attempt of an insert of children needs.
struct Insert<'d, T> {
    pairs: Vec<TwoWay>,
    lists: Listing,
    docs: &'d [&'d T],
    raws: Vec<RawDocumentBuf>,
    ordered: bool,
    extras: Option<Box<crate::engine::Extras>>,
    next: NextInsert<T>,
}

impl<T: Model> Insert<'_, T> {
    /// The parents, then the `insert`, in `session` (a transaction's).
    async fn run(&self, odm: &Odm, session: &mut ClientSession) -> Result<usize> {
        self.lists
            .add(odm, &self.pairs, Some(&mut *session))
            .await
            .map_err(|(_, e)| e)?;
        (self.next)(InsertCall {
            odm,
            docs: self.docs,
            raws: self.raws.clone(),
            ordered: self.ordered,
            session: Some(session),
            extras: self.extras.clone(),
        })
        .await
    }

    /// Without a transaction: the parents, then the `insert`, and the parents put back when
    /// either fails.
    async fn in_order(self, odm: &Odm) -> Result<usize> {
        if let Err((written, e)) = self.lists.add(odm, &self.pairs, None).await {
            self.lists.put_back(odm, &self.pairs, written).await?;
            return Err(e);
        }
        let sent = (self.next)(InsertCall {
            odm,
            docs: self.docs,
            raws: self.raws,
            ordered: self.ordered,
            session: None,
            extras: self.extras,
        })
        .await;
        if sent.is_err() {
            let written = self.lists.lists.len();
            self.lists.put_back(odm, &self.pairs, written).await?;
        }
        sent
    }
}

async fn insert_children<T: Model>(
    call: InsertCall<'_, T>,
    pairs: Vec<TwoWay>,
    lists: Listing,
    next: NextInsert<T>,
) -> Result<usize> {
    let InsertCall {
        odm,
        docs,
        raws,
        ordered,
        session,
        extras,
    } = call;
    let insert = Insert {
        pairs,
        lists,
        docs,
        raws,
        ordered,
        extras,
        next,
    };
    match session {
        // A caller's session is taken to hold a transaction (the driver does not tell).
        Some(session) => insert.run(odm, session).await,
        None if odm.supports_transactions().await? => {
            crate::transaction::in_transaction(odm, &insert, |odm, session, insert| {
                Box::pin(insert.run(odm, session))
            })
            .await
        }
        None => insert.in_order(odm).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn pair() -> TwoWay {
        TwoWay {
            child: "tasks",
            link: "owner".to_owned(),
            parent: "people",
            array: "tasks".to_owned(),
            max: Some(3),
        }
    }

    #[test]
    fn writes_of_the_reference_are_refused() {
        let pairs = [pair()];
        for update in [
            doc! { "$set": { "owner": 1 } },
            doc! { "$unset": { "owner": "" } },
            doc! { "$set": { "owner.x": 1 } },
            doc! { "$rename": { "boss": "owner" } },
        ] {
            let err = refuse_link_writes(&pairs, &update, None).unwrap_err();
            assert!(matches!(err, Error::TwoWayWrite { .. }), "{update}");
        }
        let fine = doc! { "$set": { "description": "x", "owners": 1 } };
        assert!(refuse_link_writes(&pairs, &fine, None).is_ok());
        let filter = doc! { "$and": [{ "owner": 1 }], "_id": 3 };
        assert!(refuse_link_writes(&pairs, &fine, Some(&filter)).is_err());
        assert!(refuse_link_writes(&pairs, &fine, Some(&doc! { "_id": 3 })).is_ok());
    }

    #[test]
    fn an_insert_lists_children_by_parent_in_order() {
        let raws: Vec<RawDocumentBuf> = [
            doc! { "_id": 1, "owner": "b" },
            doc! { "_id": 2, "owner": "a" },
            doc! { "_id": 3, "owner": "b" },
            doc! { "_id": 4, "owner": null },
            doc! { "_id": 5 },
        ]
        .iter()
        .map(|d| RawDocumentBuf::try_from(d).unwrap())
        .collect();
        let listing = Listing::of(&[pair()], &raws);
        let lists: Vec<(Bson, Vec<Bson>)> =
            listing.lists.into_iter().map(|(_, p, c)| (p, c)).collect();
        assert_eq!(
            lists,
            [
                (Bson::from("b"), vec![Bson::Int32(1), Bson::Int32(3)]),
                (Bson::from("a"), vec![Bson::Int32(2)]),
            ]
        );
    }
}
