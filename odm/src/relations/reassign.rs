//! Two-way references: moving a child to another parent updates both sides.

use std::fmt;

use bson::{doc, Bson, Document};
use mongodb::options::UpdateModifications;
use mongodb::ClientSession;

use super::sides::{Refusal, Sides};
use crate::engine::{Command, Effect, Own, Returning};
use crate::model::Model;
use crate::path::Value;
use crate::populate::{Inverse, RefPath};
use crate::transaction::TransactionMode;
use crate::{Error, Odm, Result};

/// What a reassignment found and did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Reassigned<P: Model> {
    /// The parent the child had before.
    pub previous: Option<P::Id>,
    /// Whether anything changed (false when the child already had this parent).
    pub changed: bool,
    /// Whether the writes ran in one transaction.
    pub in_transaction: bool,
}

/// Builder returned by [`Odm::reassign`]; `.await` it.
///
/// In a transaction (the default where the deployment has them): one `findAndModify` on the
/// child (set the parent, read the old one), one `update` pulling the child from the old
/// parent's array, one `update` adding it to the new parent's, one `commitTransaction`. A
/// write conflict with a concurrent transaction (another move of the same child, or of
/// another child of the same parent) aborts it (`abortTransaction`) and runs it again, after a
/// random pause, until [`Odm::retry_deadline`]; inside the caller's session
/// (`.session(..)`) it is returned instead, and [`Error::is_transient`] is true.
///
/// Without a transaction, in this fixed order: (1) `update` adding the child to the new
/// parent's array, (2) `findAndModify` setting the child's parent, (3) `update` pulling it from
/// the old parent's array, (4) `update` adding it to the new parent's array again and one
/// `find` reading the child's parent back: a concurrent move of the same child may have
/// pulled it in between; when the read shows such a move, one `update` per parent to correct
/// and one `find`, again, until the read agrees (nothing when the child was already there:
/// two commands). Concurrent moves of one child thus end with it listed by exactly the parent
/// it names. The child's own field is the source of truth; an interruption leaves the child
/// listed by one parent too many, never by none, and [`Odm::verify_inverse`] finds and
/// repairs it.
///
/// When the child copies fields through the reference (`owner_name`), one `find` of the new
/// parent comes first (the copies are set with the reference; inside a caller's session, after
/// an `update` claiming it) and, outside a session, one `find` re-reading it comes last; when the parents keep the child in a latest-N array, one
/// `find` before and one `aggregate` and one `update` per parent after recompute them.
#[must_use = "the reassignment runs when awaited"]
pub struct Reassign<'a, C: Model, P: Model> {
    odm: &'a Odm,
    link_path: String,
    inverse: Option<fn() -> Inverse>,
    child: Result<Bson>,
    to: Result<Bson>,
    mode: TransactionMode,
    session: Option<&'a mut ClientSession>,
    fail_after: Option<usize>,
    _types: std::marker::PhantomData<fn() -> (C, P)>,
}

impl<C: Model, P: Model> fmt::Debug for Reassign<'_, C, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reassign")
            .field("link", &self.link_path)
            .field("mode", &self.mode)
            .finish()
    }
}

/// Encodes an id the reassignment writes (into the other side's reference or array): its keys
/// are checked like those of any written document.
fn encode<T>(collection: &str, what: &str, v: &impl Value<T>) -> Result<Bson> {
    let id = v.to_bson().map_err(|e| Error::Encode {
        collection: collection.to_owned(),
        what: what.to_owned(),
        message: e.to_string(),
    })?;
    crate::key_check::check_value(collection, what, &id)?;
    Ok(id)
}

impl<'a, C: Model, P: Model> Reassign<'a, C, P> {
    pub(crate) fn new<W>(
        odm: &'a Odm,
        link: &RefPath<C, W, P>,
        child: impl Value<C::Id>,
        to: impl Value<P::Id>,
    ) -> Self {
        Reassign {
            odm,
            link_path: link.path().to_owned(),
            inverse: link.inverse,
            child: encode(C::COLLECTION, "child id", &child),
            to: encode(P::COLLECTION, "parent id", &to),
            mode: TransactionMode::Auto,
            session: None,
            fail_after: None,
            _types: std::marker::PhantomData,
        }
    }

    /// Transaction or fixed order (default [`TransactionMode::Auto`]).
    pub fn transaction(mut self, mode: TransactionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Runs inside the caller's session (and its transaction, if one is started).
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// Testing aid: fails with [`Error::Unsupported`] after `n` writes, as an interrupted
    /// process would, to exercise the repair path.
    #[cfg(feature = "testing")]
    pub fn fail_after_writes(mut self, n: usize) -> Self {
        self.fail_after = Some(n);
        self
    }

    fn checkpoint(&self, writes: usize) -> Result<()> {
        match self.fail_after {
            Some(n) if writes >= n => Err(Error::Unsupported(format!(
                "injected fault after {writes} write(s)"
            ))),
            _ => Ok(()),
        }
    }

    async fn run(mut self) -> Result<Reassigned<P>> {
        let inverse = resolve_inverse::<C, P>(self.odm.catalog(), &self.link_path, self.inverse)?;
        let child = std::mem::replace(&mut self.child, Ok(Bson::Null))?;
        let to = std::mem::replace(&mut self.to, Ok(Bson::Null))?;
        // Copies the child takes through the reference follow it, and latest-N arrays of the
        // parents it leaves and joins are recomputed.
        let mut session = self.session.take();
        // Moving the child is a write of a field its writers own: its version and `updated_at`
        // move, as on any update.
        let mut update = self.child_update(&child, &to)?;
        let taken = crate::denormalize::fill_update(
            self.odm,
            C::COLLECTION,
            crate::denormalize::Writes::of::<C>(),
            &mut update,
            false,
            session.as_deref_mut(),
        )
        .await?;
        let mut latest = crate::denormalize::LatestRefresh::before(
            self.odm,
            C::COLLECTION,
            &crate::literal::eq("_id", child.clone()),
            &[self.link_path.as_str()],
            session.as_deref_mut(),
        )
        .await?;
        latest.add_written(update.get_document("$set").unwrap_or(&Document::new()));
        let in_session = session.is_some();
        let out = self
            .reassign(&inverse, &child, &to, &update, session.as_deref_mut())
            .await?;
        latest.run(self.odm, session).await?;
        if !in_session {
            taken.settle(self.odm).await?;
        }
        Ok(out)
    }

    /// The update of the child's reference, as the maintainers of the child's model prepare it
    /// (sent by `findAndModify`, which returns the parent it leaves).
    fn child_update(&self, child: &Bson, to: &Bson) -> Result<Document> {
        let update = doc! { "$set": { self.link_path.as_str(): to.clone() } };
        let filter = crate::literal::eq("_id", child.clone());
        let mut write = Own::update(C::COLLECTION, filter, update, Effect::Owned, "reassign");
        write = write.of::<C>().one();
        self.odm.prepare_own(&mut write)?;
        match write.command {
            Command::Update(UpdateModifications::Document(update)) => Ok(update),
            _ => Err(Error::Unsupported(
                "a reassign's update became a pipeline; nothing was written".to_owned(),
            )),
        }
    }

    async fn reassign(
        &self,
        inverse: &Inverse,
        child: &Bson,
        to: &Bson,
        update: &Document,
        session: Option<&mut ClientSession>,
    ) -> Result<Reassigned<P>> {
        if let Some(session) = session {
            return self
                .steps_in_transaction(inverse, child, to, update, session)
                .await;
        }
        let transactional = match self.mode {
            TransactionMode::Never => false,
            TransactionMode::Always => true,
            TransactionMode::Auto => self.odm.supports_transactions().await?,
        };
        if !transactional {
            return self.steps_in_order(inverse, child, to, update).await;
        }
        crate::transaction::in_transaction(
            self.odm,
            &(self, inverse, child, to, update),
            |_, session, (this, inverse, child, to, update)| {
                Box::pin(this.steps_in_transaction(inverse, child, to, update, session))
            },
        )
        .await
    }

    fn previous(&self, old: Option<Document>) -> Result<Option<Bson>> {
        match old {
            None => Err(Error::NotFound {
                collection: C::COLLECTION.to_owned(),
                what: "the child to reassign".to_owned(),
            }),
            Some(mut d) => Ok(d.remove(&self.link_path).filter(|b| *b != Bson::Null)),
        }
    }

    fn decode_previous(&self, previous: &Option<Bson>) -> Result<Option<P::Id>> {
        previous
            .clone()
            .map(|b| {
                bson::deserialize_from_bson::<P::Id>(b).map_err(|e| Error::Decode {
                    collection: C::COLLECTION.to_owned(),
                    id: crate::error::show_id(None),
                    path: self.link_path.clone(),
                    message: e.to_string(),
                })
            })
            .transpose()
    }

    /// The two sides, named.
    fn sides<'s>(&'s self, inverse: &'s Inverse) -> Sides<'s> {
        Sides {
            odm: self.odm,
            child: C::COLLECTION,
            link: &self.link_path,
            parent: P::COLLECTION,
            array: &inverse.path,
            max: inverse.max,
        }
    }

    /// Adds the child to the new parent's array, refusing when the array is full.
    async fn add_to_new_parent(
        &self,
        inverse: &Inverse,
        child: &Bson,
        to: &Bson,
        session: Option<&mut ClientSession>,
    ) -> Result<()> {
        let refusal = Refusal {
            missing: "the new parent",
            full: "the new parent is full; nothing was reassigned",
        };
        self.sides(inverse)
            .add(std::slice::from_ref(child), to, &refusal, session)
            .await
    }

    /// The child's update, prepared already ([`Self::child_update`]), as one `findAndModify`
    /// of the child `by_id` returning the reference as it was, and nothing else.
    async fn update_child(
        &self,
        by_id: Document,
        child: &Bson,
        update: &Document,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<Document>> {
        let write = Own::update(
            C::COLLECTION,
            by_id,
            update.clone(),
            Effect::Relayed,
            "reassign",
        )
        .of::<C>()
        .one()
        .showing(crate::error::show_id(Some(child)));
        let returning = Returning::before(doc! { self.link_path.as_str(): 1 });
        self.odm.modify_own(write, returning, session).await
    }

    async fn steps_in_transaction(
        &self,
        inverse: &Inverse,
        child: &Bson,
        to: &Bson,
        update: &Document,
        session: &mut ClientSession,
    ) -> Result<Reassigned<P>> {
        // A sharded child's key, read first: a cluster before MongoDB 7.1 refuses a
        // `findAndModify` without it.
        let by_id = crate::engine::by_id_routed::<C>(self.odm, child, Some(&mut *session)).await?;
        let old = self
            .update_child(by_id, child, update, Some(&mut *session))
            .await?;
        let previous = self.previous(old)?;
        self.checkpoint(1)?;
        if previous.as_ref() == Some(to) {
            return Ok(Reassigned {
                previous: self.decode_previous(&previous)?,
                changed: false,
                in_transaction: true,
            });
        }
        if let Some(prev) = &previous {
            self.sides(inverse)
                .pull(vec![child.clone()], prev, Some(&mut *session))
                .await?;
        }
        self.checkpoint(2)?;
        self.add_to_new_parent(inverse, child, to, Some(&mut *session))
            .await?;
        Ok(Reassigned {
            previous: self.decode_previous(&previous)?,
            changed: true,
            in_transaction: true,
        })
    }

    async fn steps_in_order(
        &self,
        inverse: &Inverse,
        child: &Bson,
        to: &Bson,
        update: &Document,
    ) -> Result<Reassigned<P>> {
        self.add_to_new_parent(inverse, child, to, None).await?;
        self.checkpoint(1)?;
        let by_id = crate::engine::by_id_routed::<C>(self.odm, child, None).await?;
        let old = self.update_child(by_id, child, update, None).await?;
        let previous = match self.previous(old) {
            Ok(p) => p,
            Err(e) => {
                // No such child: take back the addition.
                let _ = self
                    .sides(inverse)
                    .pull(vec![child.clone()], to, None)
                    .await;
                return Err(e);
            }
        };
        self.checkpoint(2)?;
        let changed = previous.as_ref() != Some(to);
        if let (Some(prev), true) = (&previous, changed) {
            self.sides(inverse)
                .pull(vec![child.clone()], prev, None)
                .await?;
        }
        if changed {
            self.sides(inverse)
                .settle(child, to, previous.as_ref())
                .await?;
        }
        Ok(Reassigned {
            previous: self.decode_previous(&previous)?,
            changed,
            in_transaction: false,
        })
    }
}

/// The inverse of the child's reference `link_path`: declared on the child's field, or else
/// found in the registry on the parent's field that names it.
pub(crate) fn resolve_inverse<C: Model, P: Model>(
    catalog: &crate::catalog::Catalog,
    link_path: &str,
    declared: Option<fn() -> Inverse>,
) -> Result<Inverse> {
    if let Some(f) = declared {
        return Ok(f());
    }
    catalog
        .references_to(C::COLLECTION)
        .iter()
        .find(|r| r.from == P::COLLECTION && r.inverse.as_deref() == Some(link_path))
        .map(Inverse::from_info)
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "`{link_path}` of `{}` is not one side of a two-way reference: declare `inverse` on it or on the array of `{}` that lists the children",
                C::COLLECTION,
                P::COLLECTION
            ))
        })
}

impl<'a, C: Model, P: Model> std::future::IntoFuture for Reassign<'a, C, P> {
    type Output = Result<Reassigned<P>>;
    type IntoFuture = crate::engine::BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("reassign", C::COLLECTION);
        crate::trace::boxed(span, self.run(), |_| Some(1))
    }
}
