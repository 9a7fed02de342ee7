//! The payload of [`Error::DeleteRestricted`](crate::Error::DeleteRestricted): a delete
//! refused by a `restrict` rule.

use std::fmt;

/// A delete refused by a `restrict` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteRestricted {
    /// The collection the delete was on.
    pub collection: String,
    /// The referencing collection.
    pub referenced_by: String,
    /// The referencing field.
    pub path: String,
    /// How many documents reference the ones being deleted.
    pub count: u64,
    /// The ids named, read with [`deleted`](Self::deleted) and [`holders`](Self::holders)
    /// (boxed: the error type stays small).
    pub(crate) named: Box<Named>,
    /// For a check reached through cascades: the delete asked for (collection and filter),
    /// then each collection cascaded into, with the reference followed (`logmsg (host)`).
    /// Empty when the restricted collection is the one the delete was on.
    pub chain: Vec<String>,
}

/// The ids a [`DeleteRestricted`] names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Named {
    pub(crate) deleted: Vec<bson::Bson>,
    pub(crate) holders: Vec<bson::Bson>,
}

impl DeleteRestricted {
    /// The first [`LISTED`](Self::LISTED) of `deleted` and of `holders`, to name.
    pub(crate) fn named(deleted: &[bson::Bson], holders: &[bson::Bson]) -> Box<Named> {
        let listed = |ids: &[bson::Bson]| ids.iter().take(Self::LISTED).cloned().collect();
        Box::new(Named {
            deleted: listed(deleted),
            holders: listed(holders),
        })
    }

    /// The most ids [`deleted`](Self::deleted) and [`holders`](Self::holders) list.
    pub const LISTED: usize = 20;

    /// The ids of the documents deleted, or being deleted, that the check was on: at most
    /// [`LISTED`](Self::LISTED) of them.
    pub fn deleted(&self) -> &[bson::Bson] {
        &self.named.deleted
    }

    /// The ids of the documents that reference them, at most [`LISTED`](Self::LISTED) (the
    /// [`count`](Self::count) is of all of them). Filled where the holders are left as they
    /// are and reported (a follower's
    /// [`violations`](crate::follower::FollowerReport::violations)); empty in the error of a
    /// delete refused before anything was written.
    pub fn holders(&self) -> &[bson::Bson] {
        &self.named.holders
    }
}

impl fmt::Display for DeleteRestricted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [first, rest @ ..] = self.chain.as_slice() {
            if !rest.is_empty() {
                return write!(
                    f,
                    "cannot delete: deleting {first} cascades to {}, which is restricted by `{}.{}`: {} document(s) reference it (on_delete = \"restrict\")",
                    rest.join(", which cascades to "),
                    self.referenced_by,
                    self.path,
                    self.count
                );
            }
        }
        write!(
            f,
            "cannot delete from `{}`: {} document(s) in `{}` reference them through `{}` (on_delete = \"restrict\")",
            self.collection, self.count, self.referenced_by, self.path
        )
    }
}
