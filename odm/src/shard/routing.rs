//! The routing report: for every write and read the ODM generates around a model, whether
//! `mongos` can send it to one shard or must scatter it to all, and why.

use std::fmt;

use crate::model::Model;
use crate::schema::{
    copies_from, copies_into, references_to, registered_models, shard_key_of, CopyKind, OnDelete,
    ShardKey,
};

/// Where a command goes on a sharded cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteVerdict {
    /// The target collection is not sharded: the command goes to the shard holding it.
    Unsharded,
    /// The filter names the target's full shard key with equality: one shard (for an `$in`
    /// of several values, the shards owning those values only).
    Routed {
        /// The target's key, as `category` or `{host, time}`.
        key: String,
    },
    /// The filter lacks some of the target's key: every shard receives it.
    Scattered {
        /// The target's key.
        key: String,
        /// The fields of the key the filter does not name.
        missing: Vec<String>,
    },
}

impl RouteVerdict {
    /// Whether one shard (or the shards owning the named values) receives the command.
    pub fn is_routed(&self) -> bool {
        !matches!(self, RouteVerdict::Scattered { .. })
    }
}

pub(super) fn verdict_for(
    key: Option<ShardKey>,
    _collection: &str,
    named: &[&str],
) -> RouteVerdict {
    let Some(key) = key else {
        return RouteVerdict::Unsharded;
    };
    let missing: Vec<String> = key
        .names()
        .into_iter()
        .filter(|f| !named.contains(f))
        .map(str::to_owned)
        .collect();
    if missing.is_empty() {
        RouteVerdict::Routed { key: key.show() }
    } else {
        RouteVerdict::Scattered {
            key: key.show(),
            missing,
        }
    }
}

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
}

impl Route {
    /// The command `command` of `operation` on `collection`, whose filter names (with
    /// equality) the fields `named`.
    fn new(operation: String, collection: &str, command: String, named: &[&str]) -> Self {
        Route {
            operation,
            command,
            collection: collection.to_owned(),
            verdict: super::verdict(collection, named),
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
    /// The report of model `T`.
    pub fn of<T: Model>() -> RoutingReport {
        let c = T::COLLECTION;
        let model = std::any::type_name::<T>()
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_owned();
        let key = T::SHARD_KEY.or_else(|| shard_key_of(c));
        let mut routes = Vec::new();
        let mut add = |operation: String, collection: &str, command: String, named: &[&str]| {
            routes.push(Route::new(operation, collection, command, named));
        };
        let key_names: Vec<&str> = key.map(|k| k.names()).unwrap_or_default();
        let mut with_id = vec!["_id"];
        with_id.extend(key_names.iter().copied());
        // The model's own operations.
        add(
            format!("insert into {c}"),
            c,
            format!("insert {c} (each document holds its key)"),
            &key_names,
        );
        add(
            format!("replace_one (save) of a loaded {model}"),
            c,
            format!("update {c} {{ _id, <its shard key> }} (a replacement)"),
            &with_id,
        );
        add(
            format!("delete_document of a loaded {model}"),
            c,
            format!("delete {c} {{ _id, <its shard key> }}"),
            &with_id,
        );
        add(
            format!("update_document of a loaded {model}"),
            c,
            format!("update {c} {{ _id, <its shard key> }}"),
            &with_id,
        );
        add(
            format!("get / update_by_id of {model}"),
            c,
            format!("find/update {c} {{ _id }}"),
            &["_id"],
        );
        if let Some(tree) = T::TREE {
            add(
                format!("tree move of a {model} subtree (its descendants)"),
                c,
                format!("update {c} {{ {}: <node> }}", tree.ancestors),
                &[tree.ancestors],
            );
            add(
                format!("tree children of a {model}"),
                c,
                format!("find {c} {{ {}: <node> }}", tree.parent),
                &[tree.parent],
            );
            add(
                format!("tree insert or move under a {model}: the parent read (and marked, in a transaction)"),
                c,
                format!("find {c} {{ _id }} (its shard key), then findAndModify {c} {{ _id, <its shard key> }}"),
                &with_id,
            );
            add(
                format!("tree insert of {model}s under several parents: the parents marked (in a transaction)"),
                c,
                format!("update {c} {{ _id: {{ $in: <parents> }} }}"),
                &["_id"],
            );
            add(
                format!("tree insert or move under a {model}: the parent's mark removed"),
                c,
                format!("update {c} {{ _id, <its shard key read> }}"),
                &with_id,
            );
        }
        // What its documents hold copies of: read from the sources on insert and replace.
        for copy in copies_into(c) {
            if matches!(copy.kind, CopyKind::Latest { .. }) {
                let CopyKind::Latest { via, .. } = &copy.kind else {
                    continue;
                };
                add(
                    format!(
                        "recompute of {c}.{} (the latest {})",
                        copy.path, copy.source
                    ),
                    copy.source,
                    format!("aggregate {} {{ {via}: <parent> }}", copy.source),
                    &[via.as_str()],
                );
                continue;
            }
            add(
                format!("fill of {c}.{} from {} on insert", copy.path, copy.source),
                copy.source,
                format!("find {} {{ _id: {{ $in: <ids> }} }}", copy.source),
                &["_id"],
            );
            add(
                format!(
                    "settle of {c}.{} after an insert or replacement whose source in {} changed meanwhile",
                    copy.path, copy.source
                ),
                c,
                format!(
                    "update_many {c} {{ _id: {{ $in: <written> }}, <its shard key>: {{ $in: <values written> }} }}"
                ),
                &with_id,
            );
        }
        // What its operations write elsewhere: copies of its fields.
        let copies = copies_from(c);
        if copies
            .iter()
            .any(|copy| !matches!(copy.kind, CopyKind::Latest { .. }))
        {
            if !key_names.is_empty() {
                add(
                    format!("update_by_id of a {model} whose fields are copied"),
                    c,
                    format!(
                        "find {c} {{ _id }} (its shard key), then findAndModify {c} {{ _id, <its shard key> }}"
                    ),
                    &with_id,
                );
            }
            add(
                format!("update_many of {model}s whose fields are copied: each chunk"),
                c,
                format!(
                    "update_many {c} {{ $and: [<filter>, {{ _id: {{ $in: <ids read> }} }}, {{ <its shard key>: {{ $in: <values read> }} }}] }}"
                ),
                &with_id,
            );
        }
        for copy in copies {
            let fields: Vec<&str> = copy.fields.iter().map(|(f, _)| f.as_str()).collect();
            let what = format!("{model}.{}", fields.join("/"));
            if copy.background {
                background_routes(&mut add, &what, copy);
                continue;
            }
            match &copy.kind {
                CopyKind::Summary { id, .. } => {
                    let by = format!("{}.{id}", copy.path);
                    add(
                        format!("cascade of {what} into {}.{}", copy.dependent, copy.path),
                        copy.dependent,
                        format!(
                            "update_many {} {{ {by}: {{ $in: <ids> }} }}",
                            copy.dependent
                        ),
                        &[by.as_str()],
                    );
                }
                CopyKind::Flat { via } => add(
                    format!("cascade of {what} into {}.{}", copy.dependent, copy.path),
                    copy.dependent,
                    format!(
                        "update_many {} {{ {via}: {{ $in: <ids> }} }}",
                        copy.dependent
                    ),
                    &[via.as_str()],
                ),
                CopyKind::Latest { via, .. } => add(
                    format!(
                        "push of a {model} onto {}.{} (through `{via}`)",
                        copy.dependent, copy.path
                    ),
                    copy.dependent,
                    format!("update {} {{ _id: <{via}> }}", copy.dependent),
                    &["_id"],
                ),
            }
        }
        // Its references: populate and two-way moves read or write the targets by id.
        for r in T::references() {
            add(
                format!("populate of {model}.{}", r.path),
                r.to,
                format!("find {} {{ _id: {{ $in: <ids> }} }}", r.to),
                &["_id"],
            );
            add(
                format!(
                    "populate of {model}.{} by the lookup plan (never chosen by `Plan::Auto` on a sharded cluster)",
                    r.path
                ),
                r.to,
                format!(
                    "aggregate {c} [.., {{ $lookup: {{ from: {}, foreignField: _id }} }}] (one look-up per document)",
                    r.to
                ),
                &["_id"],
            );
            if let Some(inverse) = &r.inverse {
                if !key_names.is_empty() {
                    add(
                        format!("two-way move of {model}.{} (the {model})", r.path),
                        c,
                        format!(
                            "find {c} {{ _id }} (its shard key), then findAndModify {c} {{ _id, <its shard key> }}"
                        ),
                        &with_id,
                    );
                }
                add(
                    format!(
                        "two-way move of {model}.{} (the inverse {}.{inverse})",
                        r.path, r.to
                    ),
                    r.to,
                    format!("update {} {{ _id: <old/new target> }}", r.to),
                    &["_id"],
                );
            }
        }
        // Deleting its documents: each rule of the references to it.
        for r in references_to(c) {
            let rule = match r.on_delete {
                OnDelete::Restrict => "restrict (count)",
                OnDelete::Nullify => "nullify",
                OnDelete::Pull => "pull",
                OnDelete::Cascade => "cascade",
            };
            add(
                format!("delete of a {model}: {rule} on {}.{}", r.from, r.path),
                r.from,
                format!("{} {{ {}: {{ $in: <ids> }} }}", r.from, r.path),
                &[r.path.as_str()],
            );
        }
        // Deleting its documents: the summaries of them held elsewhere are pulled (in the
        // delete's plan, and again once the delete is visible).
        for copy in copies_from(c) {
            if let CopyKind::Summary { id, .. } = &copy.kind {
                let by = format!("{}.{id}", copy.path);
                add(
                    format!(
                        "delete of a {model}: its summaries pulled from {}.{}",
                        copy.dependent, copy.path
                    ),
                    copy.dependent,
                    format!(
                        "update_many {} {{ {by}: {{ $in: <ids> }} }}",
                        copy.dependent
                    ),
                    &[by.as_str()],
                );
            }
        }
        // What other models' cascades write into this collection.
        for copy in copies_into(c) {
            if let (CopyKind::Summary { id, .. }, false) = (&copy.kind, copy.background) {
                let source = registered_models()
                    .into_iter()
                    .find(|m| m.collection == copy.source)
                    .map_or(copy.source, |m| m.type_name);
                let by = format!("{}.{id}", copy.path);
                add(
                    format!(
                        "delete of a {source}: its summaries pulled from {c}.{}",
                        copy.path
                    ),
                    c,
                    format!("update_many {c} {{ {by}: {{ $in: <ids> }} }}"),
                    &[by.as_str()],
                );
            }
            let source = registered_models()
                .into_iter()
                .find(|m| m.collection == copy.source)
                .map_or(copy.source, |m| m.type_name);
            let fields: Vec<&str> = copy.fields.iter().map(|(f, _)| f.as_str()).collect();
            let what = format!("{source}.{}", fields.join("/"));
            if copy.background {
                background_routes(&mut add, &what, copy);
                continue;
            }
            let (command, by) = match &copy.kind {
                CopyKind::Summary { id, .. } => {
                    let by = format!("{}.{id}", copy.path);
                    (format!("update_many {c} {{ {by}: {{ $in: <ids> }} }}"), by)
                }
                CopyKind::Flat { via } => (
                    format!("update_many {c} {{ {via}: {{ $in: <ids> }} }}"),
                    via.clone(),
                ),
                CopyKind::Latest { via, .. } => {
                    (format!("update {c} {{ _id: <{via}> }}"), "_id".to_owned())
                }
            };
            let operation = match &copy.kind {
                CopyKind::Latest { .. } => format!("push of a {source} onto {c}.{}", copy.path),
                _ => format!("cascade of {what} into {c}.{}", copy.path),
            };
            add(operation, c, command, &[by.as_str()]);
        }
        RoutingReport {
            model,
            collection: c,
            key: key.map(|k| k.show()),
            routes,
        }
    }

    /// The report of the main model of the subset pair whose details model is `D`, with the
    /// pair's own commands: the deletes of both sides and the read of the details.
    pub fn of_subset<D: crate::rules::Subset>() -> RoutingReport {
        let mut report = RoutingReport::of::<D::Main>();
        let main = report.model.clone();
        let (m, d) = (<D::Main as Model>::COLLECTION, D::COLLECTION);
        let details = std::any::type_name::<D>()
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_owned();
        let mut with_id = vec!["_id"];
        with_id.extend(shard_key_of(m).map(|k| k.names()).unwrap_or_default());
        let mut add = |operation: String, collection: &str, command: String, named: &[&str]| {
            report
                .routes
                .push(Route::new(operation, collection, command, named));
        };
        add(
            format!("subset insert of a {main} and its {details}"),
            d,
            format!("insert {m}, insert {d} (each document holds its key)"),
            &shard_key_of(d).map(|k| k.names()).unwrap_or_default(),
        );
        add(
            format!("subset delete of {main}s: each chunk of the main documents"),
            m,
            format!("delete {m} {{ _id: {{ $in: <ids read> }}, <its shard key>: {{ $in: <values read> }} }}"),
            &with_id,
        );
        add(
            format!("subset delete of {main}s: the {details} of each chunk"),
            d,
            format!("delete {d} {{ _id: {{ $in: <ids> }} }}"),
            &["_id"],
        );
        add(
            format!("details_of {main}s"),
            d,
            format!("find {d} {{ _id: {{ $in: <ids> }} }}"),
            &["_id"],
        );
        report
    }

    /// The commands that scatter.
    pub fn scattered(&self) -> Vec<&Route> {
        self.routes
            .iter()
            .filter(|r| !r.verdict.is_routed())
            .collect()
    }
}

/// The commands of a background cascade of `what` into `copy`: the intent recorded with the
/// source's update, the worker's walk over the dependents of a source, and its batches, which
/// name the dependents' shard key values read by the walk.
fn background_routes(
    add: &mut impl FnMut(String, &str, String, &[&str]),
    what: &str,
    copy: &crate::denormalize::CopyInfo,
) {
    let (dependent, path) = (copy.dependent, &copy.path);
    let by = match &copy.kind {
        CopyKind::Summary { id, .. } => format!("{path}.{id}"),
        CopyKind::Flat { via } | CopyKind::Latest { via, .. } => via.clone(),
    };
    let intents = crate::denormalize::INTENTS;
    add(
        format!("background cascade of {what} into {dependent}.{path}: the intent"),
        intents,
        format!(
            "update {intents} {{ _id: {{ source, id }} }} (upsert, in the source's transaction)"
        ),
        &["_id"],
    );
    add(
        format!("background cascade of {what} into {dependent}.{path}: the worker's walk"),
        dependent,
        format!("find {dependent} {{ {by}: <source id> }} (ids and shard key)"),
        &[by.as_str()],
    );
    let mut named = vec!["_id"];
    named.extend(
        shard_key_of(dependent)
            .map(|k| k.names())
            .unwrap_or_default(),
    );
    add(
        format!("background cascade of {what} into {dependent}.{path}: each batch"),
        dependent,
        format!("update_many {dependent} {{ _id: {{ $in: <batch> }}, <its shard key>: {{ $in: <values read> }} }}"),
        &named,
    );
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
