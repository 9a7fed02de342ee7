//! The field of a soft-deleted model as the expansion asks for it (`#[odm(soft_delete)]`:
//! parsed in `attr::soft_delete`, checked in `check::soft_delete`).

use super::{Container, Field, Shape};

/// The model's field holding the deletion time, once `check` accepted it.
pub fn field<'c, 'a>(cont: &'c Container<'a>) -> Option<&'c Field<'a>> {
    let soft = cont.soft_delete.as_ref()?;
    cont.field_named(&soft.name())
        .filter(|f| !f.is_id() && !f.skipped && matches!(f.shape, Shape::Option(_)))
}
