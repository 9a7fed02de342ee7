//! The maintainers of the writes, in the order they act: the one list a feature joins to act on
//! an operation (see [`Maintainer`]). An operation offers its write to the list and names no
//! feature: each maintainer in turn gives the call back or takes it, and the operation sends
//! the plain command when none takes it. A maintainer that takes a call may hand it on to the
//! ones after it (`next`): what it does before and after wraps theirs.
//!
//! Before the call is offered, every maintainer is asked whether it concerns the model at all
//! ([`Maintainer::concerns`], from the model's description and the catalog): a model none of
//! them concerns (no copies, tree, versions, shard key, bounds, delete rules, ...) is sent as
//! the plain command straight away, so that it costs what the driver costs.
//!
//! The list is a type (`Link<First, Link<Second, ... End>>`), so dispatch is static.

use std::marker::PhantomData;

use bson::RawDocumentBuf;
use mongodb::results::UpdateResult;

use crate::engine::{
    write, BoxFuture, DeleteCall, Described, InsertCall, Maintainer, ModifyCall, ReplaceCall, Step,
    Stepped, UpdateCall,
};
use crate::{Model, Odm, Result};

/// The list as a type: `Link<M, Rest>`, ending with `End`.
macro_rules! maintainers {
    () => { End };
    ($first:ty $(, $rest:ty)* $(,)?) => { Link<$first, maintainers![$($rest),*]> };
}

// ANCHOR: list
/// The maintainers, first to last.
type List = maintainers![
    // A delete that leaves the document in place: nothing after it applies.
    crate::soft_delete::SoftDelete,
    // Routing: the shard key in the filter of a replacement, refusals of unroutable upserts.
    crate::shard::ShardKeys,
    // A write that changes latest-N arrays only: it and their recomputation in one transaction.
    crate::denormalize::LatestInTransaction,
    // A tree's nodes: ancestors filled on insert, refused or guarded writes, the delete rule.
    crate::tree::TreeRule,
    // Bounded arrays: pushes guarded in the filter, full arrays told from missing documents.
    crate::bounds::Bounds,
    // Versions and timestamps: stamped on every write, conflicts told from misses.
    crate::versioning::Kept,
    // Copies held by the model: taken from their sources, settled; latest-N arrays recomputed.
    crate::denormalize::Copies,
    // Copies of the model held by others: the write sent with its cascade.
    crate::denormalize::Cascade,
    // References into the model and summaries of it: the delete rules.
    crate::relations::DeleteRules,
];
// ANCHOR_END: list

/// The end of the list: every call passes.
pub(crate) struct End;

/// A maintainer `M`, then the list `N`.
pub(crate) struct Link<M, N>(PhantomData<(M, N)>);

/// A list of maintainers: each operation's call offered to them in order.
pub(crate) trait Stages {
    fn concerns(model: &Described<'_>) -> bool;
    fn insert<'a, T: Model>(call: InsertCall<'a, T>) -> Stepped<'a, InsertCall<'a, T>, usize>;
    fn update<'a, T: Model>(call: UpdateCall<'a>) -> Stepped<'a, UpdateCall<'a>, UpdateResult>;
    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult>;
    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>>;
    fn delete<'a, T: Model>(call: DeleteCall<'a>) -> Stepped<'a, DeleteCall<'a>, u64>;
    fn read<T: Model>(odm: &Odm, documents: usize);
}

impl Stages for End {
    fn concerns(_model: &Described<'_>) -> bool {
        false
    }
    fn insert<'a, T: Model>(call: InsertCall<'a, T>) -> Stepped<'a, InsertCall<'a, T>, usize> {
        Ok(Step::Pass(call))
    }
    fn update<'a, T: Model>(call: UpdateCall<'a>) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        Ok(Step::Pass(call))
    }
    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        Ok(Step::Pass(call))
    }
    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        Ok(Step::Pass(call))
    }
    fn delete<'a, T: Model>(call: DeleteCall<'a>) -> Stepped<'a, DeleteCall<'a>, u64> {
        Ok(Step::Pass(call))
    }
    fn read<T: Model>(_odm: &Odm, _documents: usize) {}
}

/// For each operation: `M`'s step, then (when it passes) the rest's; and the rest as the
/// boxed `next` a maintainer hands its call on to, ending with the plain command.
macro_rules! link {
    ($($op:ident($call:ty) -> $out:ty, $boxed:ident;)*) => {
        impl<M: Maintainer, N: Stages> Stages for Link<M, N> {
            fn concerns(model: &Described<'_>) -> bool {
                M::concerns(model) || N::concerns(model)
            }
            $(
                fn $op<'a, T: Model>(call: $call) -> Stepped<'a, $call, $out> {
                    match M::$op::<T>(call, $boxed::<T, N>)? {
                        Step::Pass(call) => N::$op::<T>(call),
                        sent => Ok(sent),
                    }
                }
            )*
            fn read<T: Model>(odm: &Odm, documents: usize) {
                M::read::<T>(odm, documents);
                N::read::<T>(odm, documents);
            }
        }
        $(
            /// The list `N`, then the plain command, as one boxed future.
            fn $boxed<'a, T: Model, N: Stages>(call: $call) -> BoxFuture<'a, Result<$out>> {
                match N::$op::<T>(call) {
                    Ok(Step::Sent(sent)) => sent,
                    Ok(Step::Pass(call)) => Box::pin(write::$op::<T>(call)),
                    Err(e) => Box::pin(std::future::ready(Err(e))),
                }
            }
        )*
    };
}

link! {
    insert(InsertCall<'a, T>) -> usize, insert_rest;
    update(UpdateCall<'a>) -> UpdateResult, update_rest;
    replace(ReplaceCall<'a, T>) -> UpdateResult, replace_rest;
    modify(ModifyCall<'a>) -> Option<RawDocumentBuf>, modify_rest;
    delete(DeleteCall<'a>) -> u64, delete_rest;
}

/// Whether no maintainer concerns the writes of `T` among the handle's models (see
/// [`Maintainer::concerns`]): its calls go straight to the plain command, as the driver would
/// send it, without being offered to any maintainer.
fn plain<T: Model>(odm: &Odm) -> bool {
    let catalog = odm.catalog();
    let entry = T::entry();
    !List::concerns(&Described {
        entry,
        related: catalog.is_related(entry.collection),
    })
}

/// Offers an insert to the list: `Sent` when a maintainer took it, else the call to send.
pub(crate) fn insert<T: Model>(call: InsertCall<'_, T>) -> Stepped<'_, InsertCall<'_, T>, usize> {
    if plain::<T>(call.odm) {
        return Ok(Step::Pass(call));
    }
    List::insert::<T>(call)
}

/// Offers an update to the list. A call carrying guards (typed pushes onto bounded arrays,
/// increments of narrow integers) is offered whatever the model.
pub(crate) fn update<T: Model>(call: UpdateCall<'_>) -> Stepped<'_, UpdateCall<'_>, UpdateResult> {
    if call.guards.is_empty() && plain::<T>(call.odm) {
        return Ok(Step::Pass(call));
    }
    List::update::<T>(call)
}

/// Offers a replacement to the list.
pub(crate) fn replace<T: Model>(
    call: ReplaceCall<'_, T>,
) -> Stepped<'_, ReplaceCall<'_, T>, UpdateResult> {
    if plain::<T>(call.odm) {
        return Ok(Step::Pass(call));
    }
    List::replace::<T>(call)
}

/// Offers a `findAndModify` update to the list (with guards, whatever the model).
pub(crate) fn modify<T: Model>(
    call: ModifyCall<'_>,
) -> Stepped<'_, ModifyCall<'_>, Option<RawDocumentBuf>> {
    if call.guards.is_empty() && plain::<T>(call.odm) {
        return Ok(Step::Pass(call));
    }
    List::modify::<T>(call)
}

/// Offers a delete to the list.
pub(crate) fn delete<T: Model>(call: DeleteCall<'_>) -> Stepped<'_, DeleteCall<'_>, u64> {
    if plain::<T>(call.odm) {
        return Ok(Step::Pass(call));
    }
    List::delete::<T>(call)
}

/// Tells the list that `documents` of `T`'s documents were read.
pub(crate) fn read<T: Model>(odm: &Odm, documents: usize) {
    if !plain::<T>(odm) {
        List::read::<T>(odm, documents);
    }
}
