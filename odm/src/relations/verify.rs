//! The verify/repair sweep of two-way references: every parent's array must list exactly the
//! children whose own reference names it.

use std::fmt;

use crate::denormalize::{InverseReport, Sweep};
use crate::model::Model;
use crate::populate::RefPath;
use crate::{Odm, Result};

/// Builder returned by [`Odm::verify_inverse`]; `.await` it.
///
/// Reads the parents in `_id` order, `batch_size` at a time (default 500), with one `find`
/// (plus `getMore`s); for each batch, one `find` of the children naming those parents
/// (projection `_id` and the reference). Memory holds one batch. With `.repair(true)`, each
/// parent in disagreement gets one `update` (`$addToSet` of the missing children) and/or one
/// (`$pullAll` of the extra ones). The child's own reference is the source of truth.
#[must_use = "the sweep runs when awaited"]
pub struct VerifyInverse<'a, C: Model, P: Model> {
    odm: &'a Odm,
    link_path: String,
    inverse: Option<fn() -> crate::populate::Inverse>,
    batch_size: usize,
    repair: bool,
    _types: std::marker::PhantomData<fn() -> (C, P)>,
}

impl<C: Model, P: Model> fmt::Debug for VerifyInverse<'_, C, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyInverse")
            .field("link", &self.link_path)
            .field("repair", &self.repair)
            .finish()
    }
}

impl<'a, C: Model, P: Model> VerifyInverse<'a, C, P> {
    pub(crate) fn new<W>(odm: &'a Odm, link: &RefPath<C, W, P>) -> Self {
        VerifyInverse {
            odm,
            link_path: link.path().to_owned(),
            inverse: link.inverse,
            batch_size: 500,
            repair: false,
            _types: std::marker::PhantomData,
        }
    }

    /// Also fixes what it finds.
    pub fn repair(mut self, yes: bool) -> Self {
        self.repair = yes;
        self
    }

    /// Parents per batch.
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    async fn run(self) -> Result<InverseReport> {
        let inverse = super::reassign::resolve_inverse::<C, P>(
            self.odm.catalog(),
            &self.link_path,
            self.inverse,
        )?
        .path;
        Sweep {
            odm: self.odm,
            child: C::COLLECTION,
            link: self.link_path,
            parent: P::COLLECTION,
            inverse,
            batch_size: self.batch_size,
            repair: self.repair,
        }
        .run()
        .await
    }
}

impl<'a, C: Model, P: Model> std::future::IntoFuture for VerifyInverse<'a, C, P> {
    type Output = Result<InverseReport>;
    type IntoFuture = crate::engine::BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
