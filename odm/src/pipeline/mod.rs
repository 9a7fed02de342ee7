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

pub(crate) mod following;

use std::marker::PhantomData;

use bson::RawDocumentBuf;
use mongodb::results::UpdateResult;

use crate::catalog::ModelEntry;
use crate::engine::{
    write, BoxFuture, DeleteCall, Described, InsertCall, Maintainer, ModifyCall, Own, ReplaceCall,
    Slot, Step, Stepped, UpdateCall,
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
    // The children of two-way references: listed by the parent they name, in one transaction
    // with the write (or before it, in a fixed order), a write of the reference refused.
    crate::relations::TwoWayChildren,
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

/// A list of maintainers: each operation's call offered in order to those that concern the
/// model (`model`, described once per operation).
pub(crate) trait Stages {
    fn concerns(model: &Described<'_>) -> bool;
    fn insert<'a, T: Model>(
        call: InsertCall<'a, T>,
        model: &Described<'_>,
    ) -> Stepped<'a, InsertCall<'a, T>, usize>;
    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        model: &Described<'_>,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult>;
    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        model: &Described<'_>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult>;
    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        model: &Described<'_>,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>>;
    fn delete<'a, T: Model>(
        call: DeleteCall<'a>,
        model: &Described<'_>,
    ) -> Stepped<'a, DeleteCall<'a>, u64>;
    fn read<T: Model>(odm: &Odm, documents: usize, model: &Described<'_>);
    fn own(write: &mut Own<'_>, model: &ModelEntry) -> Result<()>;
}

impl Stages for End {
    fn concerns(_model: &Described<'_>) -> bool {
        false
    }
    fn insert<'a, T: Model>(
        call: InsertCall<'a, T>,
        _model: &Described<'_>,
    ) -> Stepped<'a, InsertCall<'a, T>, usize> {
        Ok(Step::Pass(call))
    }
    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        _model: &Described<'_>,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        Ok(Step::Pass(call))
    }
    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        _model: &Described<'_>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        Ok(Step::Pass(call))
    }
    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        _model: &Described<'_>,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        Ok(Step::Pass(call))
    }
    fn delete<'a, T: Model>(
        call: DeleteCall<'a>,
        _model: &Described<'_>,
    ) -> Stepped<'a, DeleteCall<'a>, u64> {
        Ok(Step::Pass(call))
    }
    fn read<T: Model>(_odm: &Odm, _documents: usize, _model: &Described<'_>) {}
    fn own(_write: &mut Own<'_>, _model: &ModelEntry) -> Result<()> {
        Ok(())
    }
}

/// For each operation: `M`'s step when `M` concerns the model, then (when it passes) the
/// rest's; and the rest as the boxed `next` a maintainer hands its call on to, ending with the
/// plain command.
macro_rules! link {
    ($($op:ident($call:ty) -> $out:ty, $sent:ty, $to:ident, $boxed:ident;)*) => {
        impl<M: Maintainer, N: Stages> Stages for Link<M, N> {
            fn concerns(model: &Described<'_>) -> bool {
                M::concerns(model) || N::concerns(model)
            }
            $(
                fn $op<'a, T: Model>(
                    call: $call,
                    model: &Described<'_>,
                ) -> Stepped<'a, $call, $out> {
                    if !M::concerns(model) {
                        return N::$op::<T>(call, model);
                    }
                    match M::$op::<T>(call, $boxed::<T, N>)? {
                        Step::Pass(call) => N::$op::<T>(call, model),
                        sent => Ok(sent),
                    }
                }
            )*
            fn read<T: Model>(odm: &Odm, documents: usize, model: &Described<'_>) {
                if M::concerns(model) {
                    M::read::<T>(odm, documents);
                }
                N::read::<T>(odm, documents, model);
            }
            fn own(write: &mut Own<'_>, model: &ModelEntry) -> Result<()> {
                M::own(write, model)?;
                N::own(write, model)
            }
        }
        $(
            /// The list `N`, then the plain command, as one future (boxed when a maintainer
            /// sends it).
            fn $to<'a, T: Model, N: Stages>(call: $call) -> $sent {
                // One lookup of the model among the handle's: what the maintainers are told,
                // and the collection the plain command goes to.
                let odm = call.odm;
                let slot = odm.slot(T::COLLECTION);
                let model = described::<T>(odm, slot, call.guarded());
                let coll = slot.map(|slot| odm.slot_collection(slot, T::COLLECTION));
                // A model none of them concerns: the plain command, without walking the list.
                if !N::concerns(&model) {
                    return write::$op::<T>(call, coll);
                }
                match N::$op::<T>(call, &model) {
                    Ok(Step::Sent(sent)) => sent.into(),
                    Ok(Step::Pass(call)) => write::$op::<T>(call, coll),
                    Err(e) => {
                        let failed: BoxFuture<'a, Result<$out>> =
                            Box::pin(std::future::ready(Err(e)));
                        failed.into()
                    }
                }
            }

            /// The list `N`, then the plain command, as the boxed `next` of a maintainer.
            fn $boxed<'a, T: Model, N: Stages>(call: $call) -> BoxFuture<'a, Result<$out>> {
                $to::<T, N>(call).boxed()
            }
        )*
    };
}

link! {
    insert(InsertCall<'a, T>) -> usize, BoxFuture<'a, Result<usize>>, insert_to, insert_rest;
    update(UpdateCall<'a>) -> UpdateResult, write::UpdateSending<'a>, update_to, update_rest;
    replace(ReplaceCall<'a, T>) -> UpdateResult, write::ReplaceSending<'a>, replace_to,
        replace_rest;
    modify(ModifyCall<'a>) -> Option<RawDocumentBuf>,
        BoxFuture<'a, Result<Option<RawDocumentBuf>>>, modify_to, modify_rest;
    delete(DeleteCall<'a>) -> u64, write::DeleteSending<'a>, delete_to, delete_rest;
}

/// A plain command's future as the boxed `next` of a maintainer: boxed once (a boxed future
/// stays as it is).
trait Boxed<'a, O> {
    fn boxed(self) -> BoxFuture<'a, Result<O>>;
}

impl<'a, O> Boxed<'a, O> for BoxFuture<'a, Result<O>> {
    fn boxed(self) -> BoxFuture<'a, Result<O>> {
        self
    }
}

impl<'a, F, S, O> Boxed<'a, O> for crate::engine::Sending<'a, F, S, O>
where
    Self: std::future::Future<Output = Result<O>> + Send + 'a,
{
    fn boxed(self) -> BoxFuture<'a, Result<O>> {
        match self {
            crate::engine::Sending::Boxed(boxed) => boxed,
            plain => Box::pin(plain),
        }
    }
}

/// Whether a call carries guards of its own (typed pushes onto bounded arrays, increments of
/// narrow integers), which concern the maintainers whatever the model.
trait Guarded {
    fn guarded(&self) -> bool {
        false
    }
}

impl<T> Guarded for InsertCall<'_, T> {}
impl<T> Guarded for ReplaceCall<'_, T> {}
impl Guarded for DeleteCall<'_> {}
impl Guarded for UpdateCall<'_> {
    fn guarded(&self) -> bool {
        !self.guards.is_empty()
    }
}
impl Guarded for ModifyCall<'_> {
    fn guarded(&self) -> bool {
        !self.guards.is_empty()
    }
}

/// What the maintainers are told of `T` among the handle's models, for a call that carries
/// guards or not: one catalog lookup.
fn describe<T: Model>(odm: &Odm, guarded: bool) -> Described<'static> {
    described::<T>(odm, odm.slot(T::COLLECTION), guarded)
}

/// [`describe`] with the model's slot already looked up.
fn described<T: Model>(odm: &Odm, slot: Option<&Slot>, guarded: bool) -> Described<'static> {
    let entry = T::entry();
    let (related, two_way) = match slot {
        Some(slot) => (slot.related, slot.two_way),
        None => {
            let catalog = odm.catalog();
            (
                catalog.is_related(entry.collection),
                catalog.holds_two_way_child(entry.collection),
            )
        }
    };
    Described {
        entry,
        related,
        two_way,
        guarded,
    }
}

/// Offers a call to the list, and sends the plain command when no maintainer takes it: the
/// write as one future (unboxed for a plain command where the operation has such a future,
/// see [`crate::engine::Sending`]). A model no maintainer concerns goes straight to the plain
/// command, as the driver would send it.
macro_rules! offer {
    ($(#[$doc:meta])* $op:ident($call:ty) -> $sent:ty, $to:ident) => {
        $(#[$doc])*
        pub(crate) fn $op<'a, T: Model>(call: $call) -> $sent {
            $to::<T, List>(call)
        }
    };
}

offer!(
    /// An insert: resolves to the number of documents sent.
    insert(InsertCall<'a, T>) -> BoxFuture<'a, Result<usize>>, insert_to
);
offer!(
    /// An update.
    update(UpdateCall<'a>) -> write::UpdateSending<'a>, update_to
);
offer!(
    /// A replacement.
    replace(ReplaceCall<'a, T>) -> write::ReplaceSending<'a>, replace_to
);
offer!(
    /// A `findAndModify` update.
    modify(ModifyCall<'a>) -> BoxFuture<'a, Result<Option<RawDocumentBuf>>>, modify_to
);
offer!(
    /// A delete.
    delete(DeleteCall<'a>) -> write::DeleteSending<'a>, delete_to
);

/// How a write of `T` (a call without guards) goes: to the maintainers, or as the plain
/// command on the model's slot (`None` for a model outside the handle's catalog). One lookup
/// answers both, for the operations that build their plain command themselves.
pub(crate) enum Route<'a> {
    Maintained,
    Plain(Option<&'a Slot>),
}

/// The route of a write of `T`: whether any maintainer concerns it (when none does, its
/// writes are the plain commands).
pub(crate) fn route<T: Model>(odm: &Odm) -> Route<'_> {
    let slot = odm.slot(T::COLLECTION);
    match List::concerns(&described::<T>(odm, slot, false)) {
        true => Route::Maintained,
        false => Route::Plain(slot),
    }
}

/// Tells the maintainers that concern `T` that `documents` of its documents were read.
pub(crate) fn read<T: Model>(odm: &Odm, documents: usize) {
    let model = describe::<T>(odm, false);
    if List::concerns(&model) {
        List::read::<T>(odm, documents, &model);
    }
}

/// Prepares one of the ODM's own writes of `model`: offered to every maintainer, first to last
/// (each decides from the write's effect and the model's declaration what it adds or refuses).
/// The handle's constructor gives it to the engine, which sends the write.
pub(crate) fn own(write: &mut Own<'_>, model: &ModelEntry) -> Result<()> {
    List::own(write, model)
}
