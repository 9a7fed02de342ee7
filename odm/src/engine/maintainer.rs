//! The interface through which a feature acts on the writes of the models it concerns. The
//! ordered list of the features that do is `crate::pipeline`; an operation offers its write to
//! that list and names no feature.
//!
//! A write travels down the list as a call (one type per operation: [`InsertCall`],
//! [`UpdateCall`], [`ReplaceCall`], [`ModifyCall`], [`DeleteCall`]). Each maintainer in turn
//! either gives the call back ([`Step::Pass`]), changed or not, for the next one, or takes it
//! ([`Step::Sent`]): it returns the future that does the write, in which it may hand the call
//! on to the rest of the list (`next`, the maintainers after it and then the plain command)
//! once or several times, and act before and after. After the last maintainer, the operation
//! sends the plain command (`engine::write`).

use bson::{Bson, Document, RawDocumentBuf};
use mongodb::options::FindOneAndUpdateOptions;
use mongodb::results::UpdateResult;
use mongodb::ClientSession;

use super::{BoxFuture, Odm, Own};
#[cfg(doc)]
use crate::catalog::Catalog;
use crate::catalog::ModelEntry;
use crate::error::Shown;
use crate::transaction::TransactionMode;
use crate::update::Guard;
use crate::{Model, Result};

/// What a maintainer does with a call: gives it back for the next one (`Pass`), or takes it
/// (`Sent`: the future resolving to the operation's result).
pub(crate) enum Step<'a, C, R> {
    /// The write, for the next maintainer (or the plain command after the last).
    Pass(C),
    /// The write as this maintainer sends it.
    Sent(BoxFuture<'a, Result<R>>),
}

/// An insert about to be sent: the documents, encoded, and their typed values.
pub(crate) struct InsertCall<'a, T> {
    pub odm: &'a Odm,
    /// The typed documents, in the order of `raws` (for their kept fields).
    pub docs: &'a [&'a T],
    pub raws: Vec<RawDocumentBuf>,
    pub ordered: bool,
    pub session: Option<&'a mut ClientSession>,
    /// What the caller's own command carries besides its concern.
    pub extras: Option<Box<super::Extras>>,
}

/// An update about to be sent (`update_one`, `update_many`, `update_by_id`, `update_document`).
pub(crate) struct UpdateCall<'a> {
    pub odm: &'a Odm,
    /// The filter as it will be sent (the model's restrictions included; the positional
    /// rewrite for the update is made when it is sent).
    pub filter: Document,
    /// The filter as the caller's query gave it, shown when the write fails.
    pub shown: Shown,
    pub update: Document,
    pub array_filters: Vec<Document>,
    /// The guards of the typed pushes onto bounded arrays.
    pub guards: Vec<Guard>,
    pub many: bool,
    pub upsert: bool,
    pub mode: TransactionMode,
    /// `update_document` of a versioned model: the document's `_id` and its loaded version.
    pub loaded: Option<Box<(Bson, i64)>>,
    pub session: Option<&'a mut ClientSession>,
    /// What the caller's own command carries besides its concern.
    pub extras: Option<Box<super::Extras>>,
}

/// A replacement of a loaded document about to be sent, by `_id`.
pub(crate) struct ReplaceCall<'a, T> {
    pub odm: &'a Odm,
    pub doc: &'a T,
    pub id: Bson,
    pub filter: Document,
    pub raw: RawDocumentBuf,
    pub upsert: bool,
    pub session: Option<&'a mut ClientSession>,
    /// What the caller's own command carries besides its concern.
    pub extras: Option<Box<super::Extras>>,
}

/// A `findAndModify` update (`find_one_and_update`) about to be sent; resolves to the document
/// as the server returns it.
pub(crate) struct ModifyCall<'a> {
    pub odm: &'a Odm,
    pub filter: Document,
    /// The filter as the caller's query gave it, shown when the write fails.
    pub shown: Shown,
    pub update: Document,
    pub guards: Vec<Guard>,
    /// The driver's options (sort, upsert, which document is returned, array filters).
    pub options: FindOneAndUpdateOptions,
    pub session: Option<&'a mut ClientSession>,
}

/// A delete about to be sent: its filter (with the model's restrictions: its kind, its soft
/// delete), one document or many, and the caller's session.
pub(crate) struct DeleteCall<'a> {
    pub odm: &'a Odm,
    pub filter: Document,
    pub many: bool,
    /// A purge (`Odm::purge`): the documents are removed even from a model with soft deletes.
    pub hard: bool,
    pub session: Option<&'a mut ClientSession>,
    /// What the caller's own command carries besides its concern.
    pub extras: Option<Box<super::Extras>>,
}

/// The rest of the list after a maintainer, ending with the plain command, for each operation.
pub(crate) type NextInsert<T> = for<'s> fn(InsertCall<'s, T>) -> BoxFuture<'s, Result<usize>>;
pub(crate) type NextUpdate = for<'s> fn(UpdateCall<'s>) -> BoxFuture<'s, Result<UpdateResult>>;
pub(crate) type NextReplace<T> =
    for<'s> fn(ReplaceCall<'s, T>) -> BoxFuture<'s, Result<UpdateResult>>;
pub(crate) type NextModify =
    for<'s> fn(ModifyCall<'s>) -> BoxFuture<'s, Result<Option<RawDocumentBuf>>>;
pub(crate) type NextDelete = for<'s> fn(DeleteCall<'s>) -> BoxFuture<'s, Result<u64>>;

/// What the pipeline tells the maintainers of a model before one of its writes: the model's
/// description, whether a copy or a reference of the handle's catalog involves its collection
/// (looked up once for all of them), and whether the call carries guards.
pub(crate) struct Described<'a> {
    pub entry: &'a ModelEntry,
    /// Copied from, holding copies, or pointed to by a reference ([`Catalog::is_related`]).
    pub related: bool,
    /// Its documents are the children of a two-way reference
    /// ([`Catalog::holds_two_way_child`]): their writes keep the parents' arrays.
    pub two_way: bool,
    /// The call carries guards of its own (typed pushes onto bounded arrays, increments of
    /// narrow integers), whatever the model declares.
    pub guarded: bool,
}

/// What a step returns: the step, or an error before anything is sent.
pub(crate) type Stepped<'a, C, R> = Result<Step<'a, C, R>>;

/// What a feature does to the writes of the models it concerns. Each method's default gives
/// the call back untouched, so a maintainer implements only the operations it acts on, and
/// decides from the model (its catalog entry, the handle's catalog) whether it acts at all: a
/// model none of them concerns costs one check per maintainer, and no allocation.
pub(crate) trait Maintainer {
    /// Whether it may act on the writes of `model`, read from the model's description alone
    /// (no call): the pipeline asks every maintainer before a write, and a model none of them
    /// concerns is sent as the plain command without offering its call to any. A cheap,
    /// conservative answer: `true` may still pass every call. Default: `true`.
    fn concerns(_model: &Described<'_>) -> bool {
        true
    }

    /// Acts on an insert of `T`'s documents.
    fn insert<'a, T: Model>(
        call: InsertCall<'a, T>,
        _next: NextInsert<T>,
    ) -> Stepped<'a, InsertCall<'a, T>, usize> {
        Ok(Step::Pass(call))
    }

    /// Acts on an update of `T`'s documents.
    fn update<'a, T: Model>(
        call: UpdateCall<'a>,
        _next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        Ok(Step::Pass(call))
    }

    /// Acts on the replacement of one of `T`'s documents.
    fn replace<'a, T: Model>(
        call: ReplaceCall<'a, T>,
        _next: NextReplace<T>,
    ) -> Stepped<'a, ReplaceCall<'a, T>, UpdateResult> {
        Ok(Step::Pass(call))
    }

    /// Acts on a `findAndModify` update of one of `T`'s documents.
    fn modify<'a, T: Model>(
        call: ModifyCall<'a>,
        _next: NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<RawDocumentBuf>> {
        Ok(Step::Pass(call))
    }

    /// Prepares one of the ODM's own writes of `model` (a cascade's update, a delete rule's
    /// pull, a bucket's upsert: see [`Own`]) before it is sent, from what the write says it is
    /// for: stamps what the model keeps, refuses what cannot be sent. Default: nothing.
    fn own(_write: &mut Own<'_>, _model: &ModelEntry) -> Result<()> {
        Ok(())
    }

    /// Learns that `documents` of `T`'s documents were read through the ODM (a find, a
    /// stream's batch, a page), after they were decoded.
    fn read<T: Model>(_odm: &Odm, _documents: usize) {}

    /// Acts on a delete of `T`'s documents (a soft delete, a tree's rule, the delete rules
    /// send it themselves).
    fn delete<'a, T: Model>(
        call: DeleteCall<'a>,
        _next: NextDelete,
    ) -> Stepped<'a, DeleteCall<'a>, u64> {
        Ok(Step::Pass(call))
    }
}

impl UpdateCall<'_> {
    /// The same call again, in `session` (an attempt of a transaction).
    pub(crate) fn again<'s>(&self, odm: &'s Odm, session: &'s mut ClientSession) -> UpdateCall<'s> {
        UpdateCall {
            odm,
            filter: self.filter.clone(),
            shown: self.shown.clone(),
            update: self.update.clone(),
            array_filters: self.array_filters.clone(),
            guards: self.guards.clone(),
            many: self.many,
            upsert: self.upsert,
            mode: self.mode,
            loaded: self.loaded.clone(),
            session: Some(session),
            extras: self.extras.clone(),
        }
    }
}

impl<'a, T> ReplaceCall<'a, T> {
    /// The same call again, in `session` (an attempt of a transaction).
    pub(crate) fn again<'s>(
        &self,
        odm: &'s Odm,
        session: &'s mut ClientSession,
    ) -> ReplaceCall<'s, T>
    where
        'a: 's,
    {
        ReplaceCall {
            odm,
            doc: self.doc,
            id: self.id.clone(),
            filter: self.filter.clone(),
            raw: self.raw.clone(),
            upsert: self.upsert,
            session: Some(session),
            extras: self.extras.clone(),
        }
    }
}

/// `with_session` of each call: the same call, in `session` (the caller's, reborrowed, so that
/// a maintainer keeps it for what it does after `next`).
macro_rules! with_session {
    ($($call:ident$(<$t:ident>)?),*) => {$(
        impl<'a $(, $t)?> $call<'a $(, $t)?> {
            /// The same call in `session`: a maintainer takes the caller's session out of the
            /// call, lends it to `next`, and uses it again after.
            pub(crate) fn with_session<'s>(
                self,
                session: Option<&'s mut ClientSession>,
            ) -> $call<'s $(, $t)?>
            where
                'a: 's,
            {
                $call { session, ..self }
            }
        }
    )*};
}

with_session!(UpdateCall, ReplaceCall<T>, ModifyCall);
