//! The fields a model keeps on every write as the expansion asks for them (`#[odm(version)]`,
//! `#[odm(created_at)]`, `#[odm(updated_at)]`: parsed in `attr::versioning`, checked in
//! `check::versioning`).

use super::attr::Stamp;
use super::{Container, Field};

/// The field keeping `stamp`, if any (the first, when a mistake declares two).
pub fn field_of<'c, 'a>(cont: &'c Container<'a>, stamp: Stamp) -> Option<&'c Field<'a>> {
    cont.stored_fields()
        .find(|f| f.stamp.is_some_and(|(s, _)| s == stamp))
}
