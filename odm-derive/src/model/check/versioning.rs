//! The rules of the fields a model keeps on every write (parsed in `attr::versioning`).

use super::super::attr::Stamp;
use super::super::{Container, Field};
use crate::ctxt::Ctxt;

/// One field per kept field, and not one the ODM or serde already treats otherwise.
pub fn check(cx: &Ctxt, cont: &Container<'_>) {
    for stamp in [Stamp::Version, Stamp::CreatedAt, Stamp::UpdatedAt] {
        let mut first: Option<&Field<'_>> = None;
        for f in cont.fields.iter() {
            let Some((s, span)) = f.stamp else { continue };
            if s != stamp {
                continue;
            }
            match first {
                Some(first) => cx.error_at(
                    span,
                    format!(
                        "duplicate `#[odm({})]`: the model already keeps it in `{}`",
                        stamp.key(),
                        first.ident
                    ),
                ),
                None => first = Some(f),
            }
        }
    }
    for f in cont.fields.iter() {
        let Some((stamp, span)) = f.stamp else {
            continue;
        };
        let other = if f.is_id() {
            Some("the `_id`")
        } else if f.skipped {
            Some("a field serde skips")
        } else if f.reference.is_some() {
            Some("a reference")
        } else if f.denormalize.is_some() {
            Some("a denormalized copy")
        } else if f.embed.is_some() {
            Some("an embedded document")
        } else {
            None
        };
        if let Some(other) = other {
            cx.error_at(
                span,
                format!(
                    "`{}` is {other}, which cannot also be the kept `{}`: declare a field of its own",
                    f.ident,
                    stamp.key()
                ),
            );
        }
    }
}
