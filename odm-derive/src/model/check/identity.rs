//! The `_id` of a model and the name of its collection.

use super::super::{Container, Derive};
use crate::ctxt::Ctxt;

/// A Model has exactly one `_id` field; an Embed type has none (it is not a document of its own).
pub(super) fn check_id(cx: &Ctxt, cont: &Container<'_>) {
    let ids: Vec<_> = cont.fields.iter().filter(|f| f.is_id()).collect();
    match cont.derive {
        Derive::Model => {
            if ids.is_empty() {
                cx.error_spanned_by(
                    cont.ident,
                    format!(
                        "`{}` has no `_id` field: add one, e.g. `#[serde(rename = \"_id\")] id: ObjectId`",
                        cont.ident
                    ),
                );
            }
            for extra in ids.iter().skip(1) {
                cx.error_spanned_by(
                    extra.ident,
                    "a second field is stored as `_id`; a document has one id",
                );
            }
            for id in &ids {
                if id.skipped {
                    cx.error_spanned_by(id.ident, "the `_id` field cannot be skipped by serde: every document is stored with its id");
                }
            }
        }
        Derive::Embed => {
            // A `Ref` stored as `_id` is the source a latest-N summary stands for (each stored
            // summary carries it), not an identity of the embedded document's own.
            for id in ids.into_iter().filter(|f| f.ref_target().is_none()) {
                cx.error_spanned_by(
                    id.ident,
                    "an embedded document has no `_id` of its own: something with an identity of its own is a Model, referenced rather than embedded (rule of thumb 2); rename the field, or derive only `Model` on this type (a type cannot be both)",
                );
            }
        }
    }
}

/// A collection name is non-empty, has no `$` or NUL, and is not in the `system.` namespace.
pub(super) fn check_collection_name(cx: &Ctxt, cont: &Container<'_>) {
    if let Some(lit) = &cont.collection {
        let name = lit.value();
        let problem = if name.is_empty() {
            Some("is empty")
        } else if name.contains('$') {
            Some("contains `$`")
        } else if name.contains('\0') {
            Some("contains a NUL character")
        } else if name.starts_with("system.") {
            Some("is in the reserved `system.` namespace")
        } else {
            None
        };
        if let Some(problem) = problem {
            cx.error_spanned_by(lit, format!("invalid collection name: it {problem}"));
        }
    }
}
