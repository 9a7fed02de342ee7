//! What the runtime knows of every reference between models, and what it does with it:
//! delete rules, two-way reassignment, the arrays of two-way parents kept by the writes of
//! their children, and the verify/repair sweep of two-way references.
//!
//! Each `#[reference]` and `#[parent]` field is registered by the derive (through the model
//! registry), so a delete through the ODM finds every referencing collection, including those
//! of models the deleting code never names.

mod delete;
mod follow;
mod follows;
mod reassign;
mod sides;
mod two_way_maintain;
mod two_way_replace;
mod verify;

pub use crate::denormalize::inverse::{InverseIssue, InverseReport};
pub use delete::DeleteRestricted;
pub(crate) use delete::{
    after_deleted, delete_with_rules, deleted_by_reference, has_rules, DeleteRules,
};
pub(crate) use follow::{settle, two_way_of, TwoWay};
pub(crate) use follows::{RulesFollow, TwoWayFollow};
pub use reassign::{Reassign, Reassigned};
pub(crate) use two_way_maintain::TwoWayChildren;
pub use verify::VerifyInverse;

pub use crate::catalog::{OnDelete, RefKind, ReferenceInfo};
