//! The fields a model keeps on every write (`#[odm(version)]`, `#[odm(created_at)]`,
//! `#[odm(updated_at)]`), as the derive describes them; what the writes do with them is in
//! `versioning`.

/// The stored names of a model's kept fields (`#[odm(version)]`, `#[odm(created_at)]`,
/// `#[odm(updated_at)]`); none for most models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct Stamps {
    pub version: Option<&'static str>,
    pub created_at: Option<&'static str>,
    pub updated_at: Option<&'static str>,
}

impl Stamps {
    /// A model without kept fields.
    pub const NONE: Stamps = Stamps {
        version: None,
        created_at: None,
        updated_at: None,
    };

    /// Whether the model keeps any field.
    pub const fn is_none(&self) -> bool {
        self.version.is_none() && self.created_at.is_none() && self.updated_at.is_none()
    }

    pub(crate) fn paths(&self) -> impl Iterator<Item = &'static str> {
        [self.version, self.created_at, self.updated_at]
            .into_iter()
            .flatten()
    }
}
