//! Single-collection inheritance: several kinds of document in one collection, told apart by a
//! discriminator field (the seed's books of `type: "series"`).
//!
//! The base is an enum deriving `Model` whose variants each hold one kind, a struct deriving
//! `Model` with `#[odm(kind_of = "Base")]`. The enum decodes every kind (serde's internally
//! tagged representation: `#[serde(tag = "type")]`); a kind's own queries, updates and deletes
//! add `{type: "series"}` to their filter, its inserts and replacements store the
//! discriminator, and its indexes are partial on it.

use bson::{doc, Bson, Document};

/// The discriminator of one kind: `type: "series"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// The stored name of the discriminator field (`type`).
    pub field: &'static str,
    /// This kind's value (`series`).
    pub value: &'static str,
}

/// The kinds of a polymorphic model (the enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds {
    /// The stored name of the discriminator field.
    pub field: &'static str,
    /// The value of every kind, in the order of the variants.
    pub values: &'static [&'static str],
    /// Whether a catch-all variant (`#[serde(other)]`) takes unknown values.
    pub other: bool,
}

impl Kind {
    /// The filter selecting this kind: `{type: "series"}`.
    pub fn filter(&self) -> Document {
        crate::literal::eq(self.field, Bson::from(self.value))
    }

    /// Whether `doc` is of this kind (its discriminator holds this kind's value).
    pub(crate) fn holds(&self, doc: &Document) -> bool {
        doc.get_str(self.field).is_ok_and(|v| v == self.value)
    }

    /// `filter` restricted to this kind. The discriminator goes first; a filter that already
    /// names the field is combined with `$and`, so that it cannot widen the kind.
    pub(crate) fn restrict(&self, filter: Document) -> Document {
        if filter.is_empty() {
            return self.filter();
        }
        if filter.contains_key(self.field) {
            return doc! { "$and": [self.filter(), filter] };
        }
        let mut out = self.filter();
        out.extend(filter);
        out
    }
}

impl Kinds {
    /// Whether `value` names a kind (or the catch-all takes it).
    pub(crate) fn knows(&self, value: &str) -> bool {
        self.other || self.values.contains(&value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERIES: Kind = Kind {
        field: "type",
        value: "series",
    };

    #[test]
    fn the_kind_goes_first_and_cannot_be_widened() {
        assert_eq!(SERIES.restrict(Document::new()), doc! {"type": "series"});
        assert_eq!(
            SERIES.restrict(doc! {"volume": {"$gt": 2}}),
            doc! {"type": "series", "volume": {"$gt": 2}}
        );
        assert_eq!(
            SERIES.restrict(doc! {"type": {"$eq": "single"}}),
            doc! {"$and": [{"type": "series"}, {"type": {"$eq": "single"}}]}
        );
    }
}
