//! What the rules of `check` resolve beyond the declaration read: written by the rules, read by
//! `expand`, which never runs a rule itself.

use super::bucket::BucketFields;

/// What the rules of `check` resolve, for the code generated once they hold: written here by
/// the rules, read by `expand`, which never runs a rule itself.
#[derive(Default)]
pub struct Checked<'c, 'a> {
    /// The fields a bucket names (`#[odm(bucket(...))]`).
    pub bucket: Option<BucketFields<'c, 'a>>,
}
