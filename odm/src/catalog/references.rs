//! A `#[reference]` or `#[parent]` field, as the derive describes it.

/// How many references a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    /// `Ref<T>`
    One,
    /// `Option<Ref<T>>`
    Optional,
    /// `Vec<Ref<T>>`
    Many,
}

/// What deleting a referenced document does to the documents that reference it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnDelete {
    /// Refuse the delete while any document references it (the default: nothing is lost
    /// and nothing dangles unless a rule says so).
    #[default]
    Restrict,
    /// Set the reference to `null` (`Option<Ref<T>>` fields).
    Nullify,
    /// Remove the id from the array (`Vec<Ref<T>>` fields).
    Pull,
    /// Delete the referencing documents too, applying their own rules.
    Cascade,
}

/// What a soft delete of the referenced document does to the holders
/// (`#[reference(on_soft_delete = "...")]`, see [`crate::soft_delete`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnSoftDelete {
    /// Nothing: the holders stay as they are (the default; the document they reference is
    /// still stored and still resolves).
    #[default]
    Leave,
    /// Mark the holders too, at the same time as the document they reference, and restore
    /// them with it (the holder's model has soft deletes of its own).
    Mark,
}

/// One reference field, as registered by the derive.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReferenceInfo {
    /// The model holding the field.
    pub from_type: &'static str,
    /// Its collection.
    pub from: &'static str,
    /// The field's stored path.
    pub path: String,
    /// The referenced collection.
    pub to: &'static str,
    /// One, optional or many.
    pub kind: RefKind,
    /// The delete rule.
    pub on_delete: OnDelete,
    /// Whether the field is a `#[parent]` (child-to-parent) reference.
    pub parent: bool,
    /// Stored path of the inverse field on the referenced model, for two-way references.
    pub inverse: Option<String>,
    /// The declared bound of an array of references.
    pub max: Option<u32>,
    /// For a reference stored as a DBRef (a polymorphic reference, or a `Ref` with
    /// `#[serde(with = "odm::dbref")]`): the `$ref` its DBRefs to `to` hold. Its documents are
    /// then found by `{path.$ref, path.$id}`, one reference or an element of an array alike.
    pub dbref: Option<&'static str>,
    /// When the holder is a kind of a polymorphic model: its discriminator. The reference's
    /// delete rule then applies to documents of that kind only.
    pub from_kind: Option<crate::kind::Kind>,
    /// The holder's version and timestamp fields, which a delete rule's write updates.
    pub from_stamps: crate::catalog::Stamps,
    /// What a soft delete of the referenced document does to the holder.
    pub on_soft_delete: OnSoftDelete,
}

impl ReferenceInfo {
    /// Used by the generated code.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        from_type: &'static str,
        from: &'static str,
        path: impl Into<String>,
        to: &'static str,
        kind: RefKind,
        on_delete: OnDelete,
        parent: bool,
        inverse: Option<String>,
    ) -> Self {
        ReferenceInfo {
            from_type,
            from,
            path: path.into(),
            to,
            kind,
            on_delete,
            parent,
            inverse,
            max: None,
            dbref: None,
            from_kind: None,
            from_stamps: crate::catalog::Stamps::NONE,
            on_soft_delete: OnSoftDelete::Leave,
        }
    }

    /// Used by the generated code: a soft delete of the referenced document marks the holder.
    #[doc(hidden)]
    pub fn marked_on_soft_delete(mut self) -> Self {
        self.on_soft_delete = OnSoftDelete::Mark;
        self
    }

    /// Used by the generated code: the holder keeps a version or `updated_at`, which the
    /// writes of a delete rule update like any other write of the document.
    #[doc(hidden)]
    pub fn stamped(mut self, stamps: crate::catalog::Stamps) -> Self {
        self.from_stamps = stamps;
        self
    }

    /// Used by the generated code of a kind: the reference is held by documents of that kind.
    #[doc(hidden)]
    pub fn in_kind(mut self, kind: Option<crate::kind::Kind>) -> Self {
        self.from_kind = kind;
        self
    }

    /// Used by the generated code: the reference is stored as a DBRef.
    #[doc(hidden)]
    pub fn stored_as_dbref(mut self) -> Self {
        self.dbref = Some(self.to);
        self
    }

    /// Used by the generated code: one reference per target collection of a polymorphic
    /// reference (its `PolyRef::TARGETS`), each stored as a DBRef.
    #[doc(hidden)]
    pub fn per_target(self, targets: &'static [&'static str]) -> Vec<Self> {
        targets
            .iter()
            .map(|target| {
                let mut r = self.clone();
                r.to = target;
                r.dbref = Some(target);
                r
            })
            .collect()
    }

    /// Used by the generated code: the array's declared bound.
    #[doc(hidden)]
    pub fn bounded(mut self, max: Option<u32>) -> Self {
        self.max = max;
        self
    }
}
