//! The features that keep what they maintain when another program writes the collections, in
//! the order they act (see [`Follows`]): the one list a feature joins to follow other
//! programs' writes. The follower offers each event to the list and names no feature.
//!
//! Like the maintainers, the list is a type (`Link<First, Link<Second, ... End>>`): what each
//! feature notes of a batch is a field of one tuple, and dispatch is static.

use std::marker::PhantomData;
use std::time::Duration;

use crate::catalog::Catalog;
use crate::engine::{Absent, Applied, BoxFuture, Event, Follows, Interest, Noticed};
use crate::{Odm, Result};

/// The list as a type: `Link<F, Rest>`, ending with `End`.
macro_rules! followers {
    () => { End };
    ($first:ty $(, $rest:ty)* $(,)?) => { Link<$first, followers![$($rest),*]> };
}

// ANCHOR: list
/// The features that follow other programs' writes, first to last: for each collection of a
/// batch, what each noted is applied in this order.
pub(crate) type Followers = followers![
    // The details of deleted main documents, and the sides of pairs written alone.
    crate::subset::SubsetFollow,
    // The copies of sources whose copied fields changed.
    crate::denormalize::CopiesFollow,
    // The delete rules of deleted documents.
    crate::relations::RulesFollow,
    // The latest-N arrays sources entered, moved in or left.
    crate::denormalize::LatestFollow,
    // Trees: moved nodes' subtrees, deleted nodes' rules.
    crate::tree::TreeFollow,
    // The parents' arrays of two-way children.
    crate::relations::TwoWayFollow,
];
// ANCHOR_END: list

/// The end of the list: nothing followed.
pub(crate) struct End;

/// A follower `F`, then the list `N`.
pub(crate) struct Link<F, N>(PhantomData<(F, N)>);

/// A list of followers, walked in order.
pub(crate) trait FollowList {
    /// What the list notes of one collection's events.
    type Noted: Default + Send + Sync;
    /// What the list notes of a whole batch.
    type Batch: Default + Send + Sync;
    /// What the list's sweeps after a lost history found.
    type Swept: Default + Send + 'static;
    /// The most any follower follows of `collection`.
    fn interest(catalog: &Catalog, collection: &'static str) -> Interest;
    /// Whether any follower noted something, and whether any noted a delete.
    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Self::Noted,
        batch: &mut Self::Batch,
    ) -> (bool, bool);
    fn apply<'a>(
        odm: &'a Odm,
        collection: &'static str,
        noted: Self::Noted,
        absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>>;
    fn finish<'a>(
        odm: &'a Odm,
        batch: Self::Batch,
        settle: Duration,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>>;
    /// Each follower's sweep after a lost history, in the list's order.
    fn lost<'a>(odm: &'a Odm, watched: &'a [&'static str]) -> BoxFuture<'a, Result<Self::Swept>>;
}

impl FollowList for End {
    type Noted = ();
    type Batch = ();
    type Swept = ();
    fn interest(_catalog: &Catalog, _collection: &'static str) -> Interest {
        Interest::None
    }
    fn note(
        _odm: &Odm,
        _collection: &'static str,
        _event: &Event<'_>,
        _noted: &mut (),
        _batch: &mut (),
    ) -> (bool, bool) {
        (false, false)
    }
    fn apply<'a>(
        _odm: &'a Odm,
        _collection: &'static str,
        _noted: (),
        _absent: &'a Absent,
        _out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        crate::engine::done()
    }
    fn finish<'a>(
        _odm: &'a Odm,
        _batch: (),
        _settle: Duration,
        _out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        crate::engine::done()
    }
    fn lost<'a>(_odm: &'a Odm, _watched: &'a [&'static str]) -> BoxFuture<'a, Result<()>> {
        crate::engine::done()
    }
}

impl<F: Follows, N: FollowList> FollowList for Link<F, N>
where
    F::Noted: 'static,
    F::Batch: 'static,
    N::Noted: 'static,
    N::Batch: 'static,
{
    type Noted = (F::Noted, N::Noted);
    type Batch = (F::Batch, N::Batch);
    type Swept = (F::Swept, N::Swept);

    fn interest(catalog: &Catalog, collection: &'static str) -> Interest {
        F::interest(catalog, collection).max(N::interest(catalog, collection))
    }

    fn note(
        odm: &Odm,
        collection: &'static str,
        event: &Event<'_>,
        noted: &mut Self::Noted,
        batch: &mut Self::Batch,
    ) -> (bool, bool) {
        let first = F::note(odm, collection, event, &mut noted.0, &mut batch.0);
        let (any, deleted) = N::note(odm, collection, event, &mut noted.1, &mut batch.1);
        (
            any || first != Noticed::Nothing,
            deleted || first == Noticed::Deleted,
        )
    }

    fn apply<'a>(
        odm: &'a Odm,
        collection: &'static str,
        noted: Self::Noted,
        absent: &'a Absent,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            F::apply(odm, collection, noted.0, absent, out).await?;
            N::apply(odm, collection, noted.1, absent, out).await
        })
    }

    fn finish<'a>(
        odm: &'a Odm,
        batch: Self::Batch,
        settle: Duration,
        out: &'a mut Applied,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            F::finish(odm, batch.0, settle, out).await?;
            N::finish(odm, batch.1, settle, out).await
        })
    }

    fn lost<'a>(odm: &'a Odm, watched: &'a [&'static str]) -> BoxFuture<'a, Result<Self::Swept>> {
        Box::pin(async move { Ok((F::lost(odm, watched).await?, N::lost(odm, watched).await?)) })
    }
}

/// What the follower did when its stored position was lost (see
/// [`FollowerReport`](crate::follower::FollowerReport)): each sweep of the list, in its order.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryLost {
    /// What the server said.
    pub message: String,
    /// The repair of each subset pair: details without their main document deleted, main
    /// documents without details reported.
    pub subsets: Vec<crate::subset::SubsetReport>,
    /// The sweep of every copy (`verify_copies` with repair): what it found and repaired.
    pub copies: crate::denormalize::CopyReport,
    /// Documents referenced but missing (deleted meanwhile), whose delete rules were applied.
    pub dangling: u64,
    /// `restrict` rules those deletes broke.
    pub violations: Vec<crate::error::DeleteRestricted>,
    /// The sweep of each tree, by collection.
    pub trees: Vec<(String, crate::tree::TreeReport)>,
}

/// The sweeps of every follower of the list over the `watched` collections, after the loss the
/// server told as `message`.
pub(crate) async fn sweep_lost(
    odm: &Odm,
    watched: &[&'static str],
    message: String,
) -> Result<HistoryLost> {
    let (subsets, (copies, ((dangling, violations), ((), (trees, ((), ())))))) =
        Followers::lost(odm, watched).await?;
    Ok(HistoryLost {
        message,
        subsets,
        copies,
        dangling,
        violations,
        trees,
    })
}
