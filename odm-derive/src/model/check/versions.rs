//! The rules of `#[odm(schema_version = N, upgrade = "path")]` (parsed in `attr::versions`).

use super::super::attr::{UPGRADE_WITHOUT_VERSION, VERSION_FIELD};
use super::super::Container;
use crate::ctxt::Ctxt;

pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    let v = &cont.versions;
    if let (None, Some((_, lit))) = (v.schema_version, &v.upgrade) {
        cx.error_spanned_by(lit, UPGRADE_WITHOUT_VERSION);
    }
    let Some((_, span)) = v.schema_version else {
        return;
    };
    if cont.kind_of.is_some() {
        cx.error_at(
            span,
            "a kind's documents are versioned by its enum of kinds: declare `schema_version` (and `upgrade`) on the enum",
        );
    }
    let upserted = [
        cont.bucket.as_ref().map(|_| "bucket"),
        cont.counters.as_ref().map(|_| "counters"),
        cont.time_series.as_ref().map(|_| "time_series"),
    ];
    if let Some(what) = upserted.into_iter().flatten().next() {
        cx.error_at(
            span,
            format!("`schema_version` is for documents the ODM inserts and replaces whole; the documents of `{what}` are written by upserts, which would not store `_v`"),
        );
    }
    for f in cont
        .fields
        .iter()
        .filter(|f| f.stored == VERSION_FIELD && !f.skipped)
    {
        cx.error_at(
            f.ident.span(),
            "the ODM stores the schema version in `_v`: the struct cannot have a field stored as `_v` as well",
        );
    }
}
