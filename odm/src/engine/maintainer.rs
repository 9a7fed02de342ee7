//! The interface through which a feature acts on the writes of the models it concerns. The
//! ordered list of the features that do is `crate::pipeline`; an operation offers its write to
//! that list and names no feature.

use bson::Document;
use mongodb::ClientSession;

use super::{BoxFuture, Odm};
use crate::Model;

/// A delete about to be sent: its filter (with the model's restrictions: its kind, its soft
/// delete), one document or many, and the caller's session.
pub(crate) struct DeleteCall<'a> {
    pub odm: &'a Odm,
    pub filter: Document,
    pub many: bool,
    pub session: Option<&'a mut ClientSession>,
}

/// A write a maintainer sends itself (`Ok`, the future resolving to the operation's result),
/// or the call given back untouched (`Err`) for the next maintainer, and at the end of the
/// list for the plain command.
pub(crate) type Takeover<'a, R, C> = Result<BoxFuture<'a, crate::Result<R>>, C>;

/// What a feature does to the writes of the models it concerns. Each method's default leaves
/// the write as it is, so a maintainer implements only the operations it acts on, and decides
/// from the model (its constants, its catalog entry, the handle's catalog) whether it acts at
/// all: a model none of them concerns costs one check per maintainer, and no allocation.
pub(crate) trait Maintainer {
    /// Sends the delete of `T`'s documents itself, in place of the plain `delete` (a soft
    /// delete, a tree's rule, the delete rules), or gives the call back.
    fn delete<'a, T: Model>(&self, call: DeleteCall<'a>) -> Takeover<'a, u64, DeleteCall<'a>> {
        Err(call)
    }
}
