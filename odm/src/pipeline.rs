//! The maintainers of the writes, in the order they act: the one list a feature joins to act on
//! an operation (see [`Maintainer`](crate::engine::Maintainer)). An operation offers its write
//! to the list and names no feature; the first maintainer that takes a delete sends it, and
//! the operation sends the plain command when none does.

use crate::engine::{DeleteCall, Maintainer, Takeover};
use crate::Model;

/// The list, from first to last, and the functions that offer a write to it.
macro_rules! maintainers {
    ($($maintainer:expr),* $(,)?) => {
        /// Offers the delete of `T`'s documents to each maintainer in turn: the first that
        /// takes it sends it; `Err` gives the call back when none does.
        pub(crate) fn delete<'a, T: Model>(
            mut call: DeleteCall<'a>,
        ) -> Takeover<'a, u64, DeleteCall<'a>> {
            $(
                call = match Maintainer::delete::<T>(&$maintainer, call) {
                    Ok(sent) => return Ok(sent),
                    Err(call) => call,
                };
            )*
            Err(call)
        }
    };
}

// ANCHOR: list
maintainers![
    // The document stays: nothing after it applies.
    crate::soft_delete::SoftDelete,
    // A tree's nodes: the tree's rule, then the delete rules.
    crate::tree::TreeRule,
    // References into the model and summaries of it.
    crate::relations::DeleteRules,
];
// ANCHOR_END: list
