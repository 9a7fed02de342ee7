//! The parents' side of a two-way reference, by collection names and paths: a child added to a
//! parent's array (within its bound), pulled from one, and, without a transaction, the parents
//! a move touched made to agree with the child's reference. [`Odm::reassign`] and the writes
//! of the children ([`super::TwoWayChildren`]) both go through it.

use bson::{doc, Bson, Document, RawDocument};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::TwoWay;
use crate::engine::{Effect, Own};
use crate::{Error, Odm, Result};

/// One two-way reference, the two sides named.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sides<'a> {
    pub(crate) odm: &'a Odm,
    /// The children's collection.
    pub(crate) child: &'a str,
    /// The children's reference to their parent.
    pub(crate) link: &'a str,
    /// The parents' collection.
    pub(crate) parent: &'a str,
    /// The parents' array of children.
    pub(crate) array: &'a str,
    /// The array's declared bound.
    pub(crate) max: Option<u32>,
}

/// What a refused addition says: the missing parent (`NotFound`'s `what`) and what became of
/// the write when the parent is full (`BoundExceeded`'s `detail`).
pub(crate) struct Refusal<'r> {
    pub(crate) missing: &'r str,
    pub(crate) full: &'r str,
}

impl Sides<'_> {
    /// Adds `children` to the array of the parent `to`, all of them or none: refused when the
    /// array has no room for those it does not list yet ([`Error::BoundExceeded`]) or when
    /// there is no such parent ([`Error::NotFound`]), with nothing written.
    ///
    /// Commands: one `update` (`$addToSet`, the bound checked in its filter: for one child,
    /// room or the child listed already; for several, room for them all). When it matches
    /// nothing: one `find` of the parent (its array); for several children of which some are
    /// listed already and the rest fit, one `update` again with the filter asking for those
    /// and room for the rest (again, with a `find`, while a concurrent write changes the
    /// array between the two).
    pub(crate) async fn add(
        &self,
        children: &[Bson],
        to: &Bson,
        refusal: &Refusal<'_>,
        mut session: Option<&mut ClientSession>,
    ) -> Result<()> {
        let each = match children {
            [one] => one.clone(),
            _ => Bson::Document(doc! { "$each": children.to_vec() }),
        };
        let update = doc! { "$addToSet": { self.array: each } };
        let mut filter = self.room_for(children, to);
        let start = std::time::Instant::now();
        loop {
            if let Some(filter) = filter {
                // The parents' array of children: derived from the children's references.
                let write = Own::update(
                    self.parent,
                    filter,
                    update.clone(),
                    Effect::Derived,
                    "two-way add",
                );
                let write = write.one().showing(crate::error::show_id(Some(to)));
                let added = self.odm.write_own(write, session.as_deref_mut()).await?;
                if added.matched > 0 {
                    return Ok(());
                }
            }
            let listed = self.listed(to, session.as_deref_mut()).await?;
            let Some(listed) = listed else {
                return Err(Error::NotFound {
                    collection: self.parent.to_owned(),
                    what: refusal.missing.to_owned(),
                });
            };
            let already: Vec<Bson> = children
                .iter()
                .filter(|c| listed.contains(c))
                .cloned()
                .collect();
            let new = children.len() - already.len();
            let fits = self
                .max
                .is_none_or(|max| listed.len() + new <= max as usize);
            if children.len() == 1 || !fits || start.elapsed() >= self.odm.retry_deadline() {
                return Err(self.full(refusal));
            }
            // Some are listed already: room for the others, while those stay listed.
            let mut again = crate::literal::eq("_id", to.clone());
            if let (Some(max), true) = (self.max, new > 0) {
                let last = max as usize - new;
                again.insert(format!("{}.{last}", self.array), doc! { "$exists": false });
            }
            if !already.is_empty() {
                again.insert(self.array, doc! { "$all": already });
            }
            filter = Some(again);
        }
    }

    /// The filter of the first addition of `children` to `to`: the parent, with room for
    /// them (`None` when the bound cannot hold them all: the array is read first).
    fn room_for(&self, children: &[Bson], to: &Bson) -> Option<Document> {
        let mut filter = crate::literal::eq("_id", to.clone());
        let Some(max) = self.max else {
            return Some(filter);
        };
        let room = |last: usize| doc! { format!("{}.{last}", self.array): { "$exists": false } };
        match children {
            [one] => {
                filter.insert(
                    "$or",
                    vec![
                        Bson::Document(room((max as usize).saturating_sub(1))),
                        Bson::Document(crate::literal::eq(self.array, one.clone())),
                    ],
                );
            }
            _ if children.len() > max as usize => return None,
            _ => filter.extend(room(max as usize - children.len())),
        }
        Some(filter)
    }

    /// The children the parent `to` lists (`None`: no such parent): one `find`.
    async fn listed(
        &self,
        to: &Bson,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<Vec<Bson>>> {
        let options = FindOptions::builder()
            .projection(doc! { self.array: 1 })
            .limit(1)
            .build();
        let found = crate::engine::find_documents(
            self.odm,
            self.parent,
            crate::literal::eq("_id", to.clone()),
            options,
            session,
        )
        .await?;
        Ok(found
            .into_iter()
            .next()
            .map(|d| match crate::document::get_path(&d, self.array) {
                Some(Bson::Array(listed)) => listed.clone(),
                _ => Vec::new(),
            }))
    }

    fn full(&self, refusal: &Refusal<'_>) -> Error {
        Error::BoundExceeded {
            collection: self.parent.to_owned(),
            path: self.array.to_owned(),
            max: self.max.unwrap_or_default(),
            documents: 1,
            detail: refusal.full.to_owned(),
        }
    }

    /// Pulls `children` from the array of the parent `from`: one `update` (`$pullAll`).
    pub(crate) async fn pull(
        &self,
        children: Vec<Bson>,
        from: &Bson,
        session: Option<&mut ClientSession>,
    ) -> Result<()> {
        let write = Own::update(
            self.parent,
            crate::literal::eq("_id", from.clone()),
            crate::literal::pull_all(self.array, children),
            Effect::Derived,
            "two-way pull",
        );
        let write = write.one().showing(crate::error::show_id(Some(from)));
        self.odm.write_own(write, session).await?;
        Ok(())
    }

    /// Without a transaction, concurrent moves of the same child interleave: a move that read
    /// the old parent `A` may pull the child from `A` after another move has put it back
    /// there. The child's own reference is the truth, so each move ends by making the two
    /// parents it touched agree with it: it adds the child to `to` again (its first add came
    /// before its reference was written, and a concurrent pull may have undone it), then reads
    /// the child's reference and, while that read disagrees with what the move last wrote to
    /// `to` or `previous`, writes those parents again and reads again.
    ///
    /// Whatever the interleaving, the last write to a parent's list is then followed by a read
    /// of the reference that agrees with it, and any later change of the reference is made by a
    /// move that itself writes that parent afterwards: once the moves are done, every parent
    /// lists the child exactly when the child names it.
    ///
    /// Commands: one `update` (the add) and one `find`; then, only when a concurrent move
    /// changed the reference meanwhile, one `update` per parent to correct and one `find`, again.
    pub(crate) async fn settle(
        &self,
        child: &Bson,
        to: &Bson,
        previous: Option<&Bson>,
    ) -> Result<()> {
        let children = self.odm.own_database().collection::<Document>(self.child);
        let touched: Vec<&Bson> = std::iter::once(to).chain(previous).collect();
        // What this move last wrote for each parent: listed in `to`, pulled from `previous`.
        let mut listed: Vec<bool> = touched.iter().map(|p| *p == to).collect();
        let mut correct: Vec<usize> = vec![0];
        let start = std::time::Instant::now();
        loop {
            for &i in &correct {
                let update = if listed[i] {
                    doc! { "$addToSet": { self.array: child.clone() } }
                } else {
                    crate::literal::pull_all(self.array, vec![child.clone()])
                };
                let by_id = crate::literal::eq("_id", touched[i].clone());
                let write = Own::update(self.parent, by_id, update, Effect::Derived, "reassign")
                    .one()
                    .showing(crate::error::show_id(Some(touched[i])));
                self.odm.write_own(write, None).await?;
            }
            let now = children
                .find_one(crate::literal::eq("_id", child.clone()))
                .projection(doc! { self.link: 1 })
                .await
                .map_err(|e| Error::from_driver(self.child, e))?
                .and_then(|d| crate::document::get_path(&d, self.link).cloned());
            let wanted: Vec<bool> = touched.iter().map(|p| now.as_ref() == Some(*p)).collect();
            correct = (0..touched.len())
                .filter(|&i| wanted[i] != listed[i])
                .collect();
            if correct.is_empty() {
                return Ok(());
            }
            if start.elapsed() >= self.odm.retry_deadline() {
                return Err(Error::InverseUnsettled {
                    collection: self.parent.to_owned(),
                    path: self.array.to_owned(),
                    child: crate::error::show_id(Some(child)),
                    parents: correct
                        .iter()
                        .map(|&i| crate::error::show_id(Some(touched[i])))
                        .collect(),
                });
            }
            listed = wanted;
        }
    }
}

/// The sides of `pair`.
pub(super) fn sides<'a>(odm: &'a Odm, pair: &'a TwoWay) -> Sides<'a> {
    Sides {
        odm,
        child: pair.child,
        link: &pair.link,
        parent: pair.parent,
        array: &pair.array,
        max: pair.max,
    }
}

/// The value at the dotted `path` of a raw document (`None` when absent or `null`).
pub(super) fn raw_path(doc: &RawDocument, path: &str) -> Option<Bson> {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    let value = doc.get(head).ok().flatten()?;
    match rest {
        None => Bson::try_from(value).ok().filter(|v| *v != Bson::Null),
        Some(rest) => raw_path(value.as_document()?, rest),
    }
}
