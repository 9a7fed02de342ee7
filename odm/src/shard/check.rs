//! Checking commands that were sent against the routing report: each command's shape (its
//! name, collection and the fields its filter names with equality) must be a route of the
//! report, so that the report's verdict is the command's.

use bson::{Bson, Document};

use super::routing::{Route, RoutingReport};
use crate::catalog::{verdict_for, RouteVerdict};
use crate::monitor::SentCommand;

/// A command no route of the reports describes, on a sharded collection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Unlisted {
    /// The command's name as sent (`update`, `delete`, `find`, `findAndModify`, `aggregate`).
    pub command: String,
    /// Its collection.
    pub collection: String,
    /// The filter of the statement no route describes.
    pub filter: Document,
    /// The fields that filter names with equality.
    pub named: Vec<String>,
    /// Where the command goes, from its filter.
    pub verdict: RouteVerdict,
}

impl std::fmt::Display for Unlisted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {} (naming {:?}) {}",
            self.command,
            self.collection,
            self.filter,
            self.named,
            self.verdict.explain(&self.collection)
        )
    }
}

/// The fields `filter` names with equality (a value, `$eq` or `$in`), at its top level or in
/// a top-level `$and`: the fields a `mongos` can route on.
pub fn named_fields(filter: &Document) -> Vec<String> {
    let mut out = Vec::new();
    add_named(filter, &mut out);
    out.sort();
    out.dedup();
    out
}

fn add_named(filter: &Document, out: &mut Vec<String>) {
    for (k, v) in filter {
        if k == "$and" {
            for part in v.as_array().into_iter().flatten() {
                if let Some(part) = part.as_document() {
                    add_named(part, out);
                }
            }
        } else if !k.starts_with('$') && is_equality(v) {
            out.push(k.clone());
        }
    }
}

fn is_equality(condition: &Bson) -> bool {
    match condition {
        Bson::RegularExpression(_) => false,
        Bson::Document(d) => match d.keys().next() {
            Some(op) if op.starts_with('$') => d.len() == 1 && (op == "$eq" || op == "$in"),
            _ => true,
        },
        _ => true,
    }
}

/// The command's name, collection and the filter of each of its statements, for the
/// commands that find documents by a filter; `None` for the others (inserts, commits, index
/// commands, ...) and for aggregations that join (`$lookup`: populate's lookup plan, whose
/// first stage is the caller's filter).
pub fn filters_of(command: &Document) -> Option<(String, String, Vec<Document>)> {
    let (name, target) = command.iter().next()?;
    let collection = target.as_str()?.to_owned();
    let filters: Vec<Document> = match name.as_str() {
        "find" | "count" | "distinct" => vec![command
            .get_document("filter")
            .or_else(|_| command.get_document("query"))
            .cloned()
            .unwrap_or_default()],
        "findAndModify" => vec![command.get_document("query").cloned().unwrap_or_default()],
        "update" | "delete" => {
            let list = if name == "update" {
                "updates"
            } else {
                "deletes"
            };
            command
                .get_array(list)
                .ok()?
                .iter()
                .filter_map(|s| s.as_document()?.get_document("q").ok().cloned())
                .collect()
        }
        "aggregate" => {
            let pipeline = command.get_array("pipeline").ok()?;
            let stages: Vec<&Document> = pipeline.iter().filter_map(|s| s.as_document()).collect();
            if stages.iter().any(|s| s.contains_key("$lookup")) {
                return None;
            }
            vec![stages
                .first()
                .and_then(|s| s.get_document("$match").ok())
                .cloned()
                .unwrap_or_default()]
        }
        _ => return None,
    };
    Some((name.clone(), collection, filters))
}

impl Route {
    /// Whether this route describes a command `verb` on `collection` whose filter names the
    /// fields `named` with equality: the same command on the same collection, naming exactly
    /// the route's fields (at least them, when the route's filter includes the caller's).
    pub fn describes(&self, verb: &str, collection: &str, named: &[String]) -> bool {
        self.verb == verb
            && self.collection == collection
            && self.named.iter().all(|f| named.contains(f))
            && (self.open || named.iter().all(|f| self.named.contains(f)))
    }
}

/// The commands of `log` (a log kept with documents) on sharded collections that no route of
/// `reports` describes: empty when the reports say where every one of them goes. Commands the
/// ODM does not generate from declarations (the caller's own finds and updates by filter)
/// are unlisted too: check the log of generated operations.
pub fn unlisted(reports: &[RoutingReport], log: &[SentCommand]) -> Vec<Unlisted> {
    unlisted_in(&crate::catalog::Catalog::linked(), reports, log)
}

/// [`unlisted`], the shard keys being those of `catalog`'s models.
pub fn unlisted_in(
    catalog: &crate::catalog::Catalog,
    reports: &[RoutingReport],
    log: &[SentCommand],
) -> Vec<Unlisted> {
    let mut out = Vec::new();
    for sent in log {
        let Some((verb, collection, filters)) = sent.command.as_ref().and_then(filters_of) else {
            continue;
        };
        let Some(key) = catalog.shard_key_of(&collection) else {
            continue;
        };
        for filter in filters {
            let named = named_fields(&filter);
            let listed = reports
                .iter()
                .flat_map(|r| &r.routes)
                .any(|r| r.describes(&verb, &collection, &named));
            if !listed {
                let names: Vec<&str> = named.iter().map(String::as_str).collect();
                out.push(Unlisted {
                    command: verb.clone(),
                    verdict: verdict_for(Some(key), &collection, &names),
                    collection: collection.clone(),
                    filter,
                    named,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn equality_values_and_in_lists_are_named_other_conditions_are_not() {
        let filter = doc! {
            "_id": 1,
            "logmsgs._id": { "$nin": [1] },
            "$and": [{ "category": { "$in": ["a"] } }, { "n": { "$gt": 1 } }],
            "host": { "name": "x" },
            "at": { "$eq": 3 },
        };
        assert_eq!(named_fields(&filter), ["_id", "at", "category", "host"]);
    }

    #[test]
    fn each_statement_of_an_update_has_its_filter() {
        let cmd = doc! { "update": "products", "updates": [{ "q": { "a": 1 }, "u": {} }, { "q": { "b": 1 }, "u": {} }] };
        let (verb, coll, filters) = filters_of(&cmd).unwrap();
        assert_eq!((verb.as_str(), coll.as_str()), ("update", "products"));
        assert_eq!(filters, [doc! { "a": 1 }, doc! { "b": 1 }]);
        let join =
            doc! { "aggregate": "products", "pipeline": [{ "$match": {} }, { "$lookup": {} }] };
        assert_eq!(filters_of(&join), None);
    }
}
