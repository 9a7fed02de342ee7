//! What a tree's `parent` and `ancestors` hold: ids of nodes of the same model.

use crate::{Copied, Each, Field, ShardKeyed, Single};

/// A tree's links are `Ref`s to nodes of the tree itself; implemented for every type by
/// itself, and checked by `#[odm(tree)]` as `Target: SameTree<Node>` at the `Ref`'s target.
#[diagnostic::on_unimplemented(
    message = "a node of the tree of `{Node}` links to `{Self}`: a tree's parent and ancestors are nodes of the same model",
    label = "expected `{Node}`",
    note = "declare `parent: Option<Ref<{Node}>>` and `ancestors: Vec<Ref<{Node}>>` (or an `Option` and a `Vec` of the id type); a reference to another model is a `#[reference]`"
)]
pub trait SameTree<Node> {}
impl<T> SameTree<T> for T {}

/// A tree's links stored as plain ids hold the tree's id type; checked by `#[odm(tree)]` as
/// `Held: TreeId<Node, Id>` at the held type.
#[diagnostic::on_unimplemented(
    message = "the tree of `{Node}` links nodes by their `_id`, a `{Id}`, but this field holds `{Self}`",
    label = "expected `{Id}` (or `Ref<{Node}>`)",
    note = "a tree's parent and ancestors are ids of nodes of the same model: `Option<Ref<{Node}>>` / `Vec<Ref<{Node}>>`, or an `Option` / a `Vec` of its id type"
)]
pub trait TreeId<Node, Id> {}
impl<Node, Id> TreeId<Node, Id> for Id {}

/// Used by the generated code: `Target` is `Node`.
pub const fn tree_ref<Node, Target: SameTree<Node>>() {}

/// Used by the generated code: `Held` is `Id`.
pub const fn tree_id<Node, Id, Held: TreeId<Node, Id>>() {}

/// Path markers whose fields another model may copy (`#[denormalize]`): all but the fields odm
/// keeps itself by writes that no cascade follows (a tree's links, versions and timestamps).
#[diagnostic::on_unimplemented(
    message = "a field marked `{Self}` cannot be copied by `#[denormalize]`",
    label = "kept by odm itself, by writes that no cascade follows",
    note = "`Kept`: a tree's parent or ancestors, which a move rewrites for the whole subtree in one update; keep a `Ref` to the node instead and populate it, or copy a field of the node that the application writes (its name)",
    note = "`Stamped`: a version or a timestamp, which each document keeps for itself; populate a `Ref` to read the source's"
)]
pub trait Copyable {}
impl Copyable for Single {}
impl Copyable for Each {}
impl Copyable for Copied {}
impl Copyable for ShardKeyed {}

/// Used by the generated code of every copy: the source field is not a tree's kept link.
pub const fn copyable<R, T, M: Copyable>(_source: &Field<R, T, M>) {}
