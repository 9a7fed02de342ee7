//! The rules of an index's kind and options (parsed in `attr::index`): what the server would
//! refuse when `sync_indexes` creates the index is refused while compiling.

use crate::ctxt::Ctxt;
use crate::model::attr::{IndexKind, IndexOptions};
use crate::model::Container;

pub(super) fn check(cx: &Ctxt, cont: &Container<'_>) {
    for f in cont.stored_fields() {
        let Some(index) = &f.index else { continue };
        let (unique, sparse) = (index.unique.is_some(), index.sparse.is_some());
        check_forever(cx, cont, &index.more, unique, sparse, &|m| {
            cx.error_spanned_by(&index.tokens, m)
        });
        if let Some((kind, span)) = index.kind {
            let name = match kind {
                IndexKind::Sphere => "2dsphere",
                IndexKind::Hashed => "hashed",
                IndexKind::Wildcard => "wildcard",
            };
            if index.unique.is_some() {
                cx.error_at(span, format!("a {name} index cannot be unique: the server refuses it; index the field a second time with `#[odm(index(keys = \"...\", unique))]`"));
            }
            if index.text.is_some() || index.desc.is_some() {
                cx.error_at(span, format!("`kind = \"{name}\"` is the key of the index: it takes neither `text` nor `desc`"));
            }
        }
        if index.text.is_some() && index.more.collation.is_some() {
            cx.error_spanned_by(
                &index.tokens,
                "a text index compares by its language, not by a collation: the server refuses one",
            );
        }
    }
    for idx in &cont.compound_indexes {
        let (unique, sparse) = (idx.unique.is_some(), idx.sparse.is_some());
        check_forever(cx, cont, &idx.more, unique, sparse, &|m| {
            cx.error_at(idx.span, m)
        });
        if idx.text.is_some() && idx.more.collation.is_some() {
            cx.error_at(
                idx.span,
                "a text index compares by its language, not by a collation: the server refuses one",
            );
        }
    }
}

const SPARSE_UNIQUE: &str = "a unique index of a model with soft deletes applies to live documents only, through the soft delete's field as its last key, which `sparse` would leave out of the index: make the field an `Option` (unique among the documents that have it) instead of `sparse`, or keep the value unique among deleted documents too with `forever`";

/// `forever` keeps a unique value unique across soft-deleted documents: it needs a unique
/// index of a model with soft deletes. A sparse unique index of such a model needs it (see
/// `SPARSE_UNIQUE`), reported at the index by `at_index`.
fn check_forever(
    cx: &Ctxt,
    cont: &Container<'_>,
    more: &IndexOptions,
    unique: bool,
    sparse: bool,
    at_index: &dyn Fn(&str),
) {
    if let Some(span) = more.forever {
        if !unique {
            cx.error_at(span, "`forever` keeps a unique value unique among soft-deleted documents too: it goes with `unique`");
        } else if cont.soft_delete.is_none() {
            cx.error_at(span, format!("`forever` is for a model with soft deletes, whose unique indexes apply to live documents only without it; every index of `{}` applies to all of its documents", cont.ident));
        }
    } else if unique && sparse && cont.soft_delete.is_some() {
        at_index(SPARSE_UNIQUE);
    }
}
