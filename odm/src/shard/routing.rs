//! The routing report: for every write and read the ODM generates around a model, whether
//! `mongos` can send it to one shard or must scatter it to all, and why.

use std::fmt;

use crate::catalog::{Catalog, RouteVerdict, ShardKey};

/// One command the ODM generates, with its target and verdict.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Route {
    /// What sends it (`cascade of Part.name into products.parts`).
    pub operation: String,
    /// The command and its filter (`update_many products { parts.id: { $in: <ids> } }`).
    pub command: String,
    /// The collection it targets.
    pub collection: String,
    /// Routed, scattered or unsharded.
    pub verdict: RouteVerdict,
    /// The command's name as sent (`update`, `delete`, `find`, `findAndModify`, `aggregate`,
    /// `insert`).
    pub verb: String,
    /// The fields its filter names with equality.
    pub named: Vec<String>,
    /// Whether the filter also holds the caller's own filter, which may name more fields. On a
    /// sharded collection such a command has two routes: the caller's filter without the key
    /// (scattered), and `..., by a filter naming <key>` (routed); a command sent is the route
    /// naming the most of its fields.
    pub open: bool,
}

impl Route {
    /// The command `command` of `operation` on `collection`, whose filter names (with
    /// equality) the fields `named`, judged among the models of `catalog`.
    pub(super) fn new(
        catalog: &Catalog,
        operation: String,
        collection: &str,
        command: String,
        named: &[&str],
    ) -> Self {
        let verb = match command.split_whitespace().next().unwrap_or_default() {
            "update_many" => "update",
            "delete_many" => "delete",
            other => other,
        }
        .to_owned();
        let mut names: Vec<String> = named.iter().map(|f| (*f).to_owned()).collect();
        names.sort();
        names.dedup();
        Route {
            open: command.contains("<filter>"),
            verb,
            named: names,
            operation,
            command,
            collection: collection.to_owned(),
            verdict: super::verdict_in(catalog, collection, named),
        }
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}",
            self.operation,
            self.verdict.explain(&self.collection)
        )
    }
}

impl RouteVerdict {
    /// The verdict in words, for a command on `collection`: `scatters: the filter lacks
    /// products' shard key `category``.
    pub fn explain(&self, collection: &str) -> String {
        let c = possessive(collection);
        match self {
            RouteVerdict::Unsharded => {
                format!("goes to one shard: `{collection}` is not sharded")
            }
            RouteVerdict::Routed { key } => {
                format!("is routed: the filter names {c} shard key {key}")
            }
            RouteVerdict::Scattered { key, missing } => {
                let missing = missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                if key.trim_matches(['`', '{', '}']) == missing.replace('`', "") {
                    format!("scatters: the filter lacks {c} shard key {key}")
                } else {
                    format!("scatters: the filter lacks {missing} of {c} shard key {key}")
                }
            }
        }
    }
}

/// `products'`, `logmsg's`: the collection's name as the owner of its shard key.
fn possessive(collection: &str) -> String {
    match collection.ends_with('s') {
        true => format!("{collection}'"),
        false => format!("{collection}'s"),
    }
}

/// Every command the ODM generates around one model, with where it goes on a sharded
/// cluster: its own operations, what they write elsewhere (cascades, latest-N arrays, two-way
/// references, delete rules, populate), and what other models' operations write into its
/// collection. Built from the declarations alone: sends nothing. See [`RoutingReport::of`].
///
/// Each route's `operation` is the operation that sends it, then, after `: `, which of its
/// commands it is (`update_by_id of a Gadget whose fields are copied: its shard key read`): the
/// routes of one operation are the commands it sends, each with the verdict of its filter.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoutingReport {
    /// The model's type name.
    pub model: String,
    /// Its collection.
    pub collection: &'static str,
    /// Its shard key, as `category` or `{host, time}`, when it declares one.
    pub key: Option<String>,
    /// The commands, grouped: the model's own operations first, then what they write
    /// elsewhere, then what others write into its collection.
    pub routes: Vec<Route>,
}

impl RoutingReport {
    /// The shard key declared for `collection` (by a model linked into the program), if any.
    pub fn key_of(collection: &str) -> Option<ShardKey> {
        Catalog::linked().shard_key_of(collection)
    }

    /// The commands that scatter.
    pub fn scattered(&self) -> Vec<&Route> {
        self.routes
            .iter()
            .filter(|r| !r.verdict.is_routed())
            .collect()
    }
}

impl fmt::Display for RoutingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => writeln!(
                f,
                "routing of `{}` ({} sharded by {key}):",
                self.model, self.collection
            )?,
            None => writeln!(
                f,
                "routing of `{}` ({} not sharded):",
                self.model, self.collection
            )?,
        }
        for r in &self.routes {
            writeln!(f, "  {r}")?;
            writeln!(f, "      {}", r.command)?;
        }
        Ok(())
    }
}
