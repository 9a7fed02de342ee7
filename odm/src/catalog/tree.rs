//! A tree of documents (`#[odm(tree)]`), as the derive describes it.

/// What deleting a node does to the nodes below it (`#[odm(tree(on_delete = "..."))]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeleteRule {
    /// Refuse to delete a node that has children (the default: nothing is lost unless a rule
    /// says so).
    #[default]
    Restrict,
    /// Delete the node's whole subtree with it.
    Cascade,
    /// Lift the node's children to its parent (roots when it was a root): every descendant
    /// loses the node from its ancestors.
    Lift,
}

/// A model stored as a tree of documents: each names its parent and lists its ancestors, root
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TreeInfo {
    /// Stored path of the parent's id (`parent`).
    pub parent: &'static str,
    /// Stored path of the ancestors' ids, root first (`ancestors`).
    pub ancestors: &'static str,
    /// What deleting a node does to its subtree.
    pub on_delete: DeleteRule,
}

impl TreeInfo {
    /// Used by the generated code.
    #[doc(hidden)]
    pub const fn new(parent: &'static str, ancestors: &'static str, on_delete: DeleteRule) -> Self {
        TreeInfo {
            parent,
            ancestors,
            on_delete,
        }
    }
}
