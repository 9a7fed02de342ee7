//! The rules of an index's kind and options (parsed in `attr::index`): what the server would
//! refuse when `sync_indexes` creates the index is refused while compiling.

use crate::ctxt::Ctxt;
use crate::model::attr::IndexKind;
use crate::model::Container;

pub(super) fn check(cx: &Ctxt, cont: &Container<'_>) {
    for f in cont.stored_fields() {
        let Some(index) = &f.index else { continue };
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
        if idx.text.is_some() && idx.more.collation.is_some() {
            cx.error_at(
                idx.span,
                "a text index compares by its language, not by a collation: the server refuses one",
            );
        }
    }
}
