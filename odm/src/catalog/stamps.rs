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
    /// An enum of kinds whose kinds keep different fields: each document's are its kind's
    /// ([`Model::stamps`](crate::Model::stamps)), and an update through the enum, which may
    /// match several kinds, is refused.
    pub mixed: bool,
}

impl Stamps {
    /// A model without kept fields.
    pub const NONE: Stamps = Stamps {
        version: None,
        created_at: None,
        updated_at: None,
        mixed: false,
    };

    /// The kept fields of an enum of kinds: its kinds' when they all keep the same ones, else
    /// mixed.
    pub const fn common(kinds: &[Stamps]) -> Stamps {
        let Some(first) = kinds.first() else {
            return Stamps::NONE;
        };
        let mut i = 1;
        while i < kinds.len() {
            let k = &kinds[i];
            if k.mixed
                || !same(first.version, k.version)
                || !same(first.created_at, k.created_at)
                || !same(first.updated_at, k.updated_at)
            {
                return Stamps {
                    mixed: true,
                    ..Stamps::NONE
                };
            }
            i += 1;
        }
        *first
    }

    /// Whether the model keeps any field.
    pub const fn is_none(&self) -> bool {
        !self.mixed
            && self.version.is_none()
            && self.created_at.is_none()
            && self.updated_at.is_none()
    }

    pub(crate) fn paths(&self) -> impl Iterator<Item = &'static str> {
        [self.version, self.created_at, self.updated_at]
            .into_iter()
            .flatten()
    }
}

/// Whether two optional names are equal, in a `const fn`.
const fn same(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => crate::rules::names::same(a, b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: Stamps = Stamps {
        version: Some("v"),
        ..Stamps::NONE
    };

    #[test]
    fn kinds_keeping_the_same_fields_share_them_else_they_are_mixed() {
        assert_eq!(Stamps::common(&[]), Stamps::NONE);
        assert_eq!(Stamps::common(&[V, V]), V);
        assert_eq!(Stamps::common(&[Stamps::NONE, Stamps::NONE]), Stamps::NONE);
        let other = Stamps {
            version: Some("w"),
            ..Stamps::NONE
        };
        for mixed in [[V, Stamps::NONE], [V, other], [Stamps::NONE, V]] {
            let c = Stamps::common(&mixed);
            assert!(c.mixed && c.version.is_none(), "{mixed:?}");
        }
    }
}
