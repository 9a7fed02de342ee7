//! The documents a rule writes to (`Matching`) and what it writes (`Change`).

use bson::{doc, Bson, Document};
use mongodb::options::UpdateModifications;

use crate::document::IdKey;

/// What a pull or nullify rule writes to the documents it matches.
pub(super) enum Change {
    /// `{$pullAll: {path: ids}}`, or `{$pull: {path: {field: {$in: ids}}}}` for an array
    /// of summaries: built per chunk of ids, since it repeats them.
    Pull {
        path: String,
        field: Option<String>,
        /// The `$ref` and the database of DBRefs.
        dbref: Option<(&'static str, String)>,
    },
    /// An update that does not depend on the ids (`$set` to null, `$unset`).
    Fixed(Document),
}

impl Change {
    /// The update of `ids`.
    pub(super) fn update(&self, ids: &[Bson]) -> UpdateModifications {
        let update = match self {
            // DBRefs whatever their fields' order: a pipeline testing each element.
            Change::Pull {
                path,
                dbref: Some((target, db)),
                ..
            } => {
                return UpdateModifications::Pipeline(crate::reference::dbref::pull_pipeline(
                    path,
                    target,
                    ids.to_vec(),
                    Some(db),
                ))
            }
            Change::Pull {
                path,
                field: None,
                dbref: None,
            } => crate::literal::pull_all(path, ids.to_vec()),
            Change::Pull {
                path,
                field: Some(f),
                ..
            } => doc! { "$pull": { path.as_str(): crate::literal::is_in(f, ids.to_vec()) } },
            Change::Fixed(update) => update.clone(),
        };
        UpdateModifications::Document(update)
    }

    /// The id budget of one statement: halved when the update repeats the filter's ids.
    pub(super) fn budget(&self) -> usize {
        match self {
            Change::Pull { .. } => crate::batch::MAX_IDS_BYTES / 2,
            Change::Fixed(_) => crate::batch::MAX_IDS_BYTES,
        }
    }
}

/// The documents of a collection whose `key` holds one of `ids` (`{key: {$in: ids}}`, sent
/// per [chunk](crate::batch) of ids).
pub(super) struct Matching {
    pub(super) collection: String,
    pub(super) key: String,
    pub(super) ids: Vec<Bson>,
    /// For references stored as DBRefs: the `$ref` they hold, whether `key` is an array, and
    /// the database deleted from (which their `$db`, when they have one, names).
    pub(super) dbref: Option<(&'static str, bool, String)>,
    /// When the holders are a kind of a polymorphic model: its discriminator.
    pub(super) kind: Option<crate::kind::Kind>,
    /// The holders' model, by type name, when the rule's write changes a reference its
    /// writers own (a nullify, a pull): the write is then [`Effect::Owned`], and moves the
    /// holders' version and `updated_at` (see [`crate::versioning`]), so that a stale
    /// replacement of a holder is a conflict and does not bring back the reference the rule
    /// removed. `None`: derived data (a summary, a latest-N array), left unstamped.
    ///
    /// [`Effect::Owned`]: crate::engine::Effect::Owned
    pub(super) owner: Option<&'static str>,
}

impl Matching {
    pub(super) fn filter(&self, chunk: Vec<Bson>) -> Document {
        let filter = self.key_filter(chunk);
        match self.kind {
            Some(kind) => kind.restrict(filter),
            None => filter,
        }
    }

    pub(super) fn key_filter(&self, chunk: Vec<Bson>) -> Document {
        match self.dbref {
            None => crate::literal::is_in(&self.key, chunk),
            // One DBRef: its fields, so that one written in another order matches; one naming
            // another database (`$db`) is not this database's document.
            Some((target, false, ref db)) => {
                let key = &self.key;
                let mut d = crate::literal::eq(&format!("{key}.$ref"), target.into());
                d.extend(crate::literal::is_in(&format!("{key}.$id"), chunk));
                d.extend(crate::literal::is_in(
                    &format!("{key}.$db"),
                    vec![Bson::Null, Bson::String(db.clone())],
                ));
                d
            }
            // An array of DBRefs: an element that is one of them, in any field order and with
            // any other fields, without a `$db` or naming this database (two conditions on
            // the dotted fields alone could be met by two different elements).
            Some((target, true, ref db)) => {
                crate::reference::dbref::array_holds(&self.key, target, chunk, Some(db))
            }
        }
    }

    /// `ids` in chunks whose filter (and an update repeating them) stays within `bytes`. A
    /// reference stored as a DBRef names its ids more than once: an array's filter twice (the
    /// dotted `$id` and the test of each element) and its pull once more, a single one's filter
    /// once with the collection's name beside it: a third of the budget each.
    pub(super) fn chunks(&self, ids: &[Bson], bytes: usize) -> Vec<Vec<Bson>> {
        let bytes = match self.dbref {
            Some(_) => bytes / 3,
            None => bytes,
        };
        crate::batch::chunks_within(ids.to_vec(), bytes, crate::batch::MAX_IDS)
    }

    /// Whether the document `d` (projected on `key`) holds one of `ids`.
    pub(super) fn holds(&self, d: &Document, ids: &std::collections::HashSet<IdKey>) -> bool {
        if self.kind.is_some_and(|k| !k.holds(d)) {
            return false;
        }
        let one = |v: &Bson| match &self.dbref {
            None => ids.contains(&IdKey::of(v)),
            Some((target, _, db)) => v.as_document().is_some_and(|r| {
                r.get_str("$ref").is_ok_and(|c| c == *target)
                    && r.get("$id").is_some_and(|id| ids.contains(&IdKey::of(id)))
                    && r.get_str("$db").map_or(true, |d| d == db)
            }),
        };
        match crate::document::value_at(d, &self.key) {
            Bson::Array(items) => items.iter().any(one),
            v => one(&v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    /// A rule on DBRefs names its ids several times: the chunks keep each filter, and the
    /// pipeline that repeats the ids, under the command limit.
    #[test]
    pub(super) fn chunks_of_dbrefs_are_measured_as_sent() {
        let target: &'static str = Box::leak("c".repeat(100).into_boxed_str());
        let ids: Vec<Bson> = (0..400_000).map(Bson::Int32).collect();
        for many in [false, true] {
            let holders = Matching {
                collection: "feed".into(),
                key: "mentions".into(),
                ids: ids.clone(),
                dbref: Some((target, many, "d".repeat(60))),
                kind: None,
                owner: None,
            };
            let change = Change::Pull {
                path: "mentions".into(),
                field: None,
                dbref: Some((target, "d".repeat(60))),
            };
            let chunks = holders.chunks(&holders.ids, change.budget());
            assert!(chunks.len() > 1);
            assert_eq!(chunks.iter().map(Vec::len).sum::<usize>(), ids.len());
            for chunk in chunks {
                let filter = holders.filter(chunk.clone());
                let update = match change.update(&chunk) {
                    UpdateModifications::Document(d) => Bson::Document(d),
                    UpdateModifications::Pipeline(p) => {
                        Bson::Array(p.into_iter().map(Bson::Document).collect())
                    }
                    _ => unreachable!("a document or a pipeline"),
                };
                let bytes = bson::serialize_to_vec(&doc! { "q": filter, "u": update })
                    .unwrap()
                    .len();
                assert!(bytes < crate::batch::MAX_COMMAND_BYTES, "{bytes} bytes");
            }
        }
    }
}
