//! `sync --dry-run`: what a sync would create and what differs, read without writing
//! (`listIndexes`, `listCollections`, and one `hello` when a model declares a shard key).

use std::collections::BTreeSet;

use bson::{doc, Bson, Document};
use serde_json::json;

use super::report::Report;
use crate::{Error, Odm, Result};

/// What one collection's sync would do, read without writing.
#[derive(Debug, Default)]
struct Planned {
    collection: String,
    to_create: Vec<String>,
    unchanged: Vec<String>,
    differing: Vec<(String, Vec<String>)>,
    extra: Vec<String>,
    /// What differs about a collection declared a time-series collection.
    series: Option<String>,
}

pub(super) async fn dry_run(odm: &Odm) -> Result<Report> {
    let mut targets: Vec<(String, Vec<crate::index::IndexSpec>)> = Vec::new();
    for entry in odm.catalog().models() {
        let specs = (entry.indexes)();
        match targets.iter_mut().find(|(c, _)| c == entry.collection) {
            Some((_, existing)) => {
                for s in specs {
                    if !existing.iter().any(|e| e.name() == s.name()) {
                        existing.push(s);
                    }
                }
            }
            None => targets.push((entry.collection.to_owned(), specs)),
        }
    }
    targets.sort_by(|a, b| a.0.cmp(&b.0));
    let mut planned = Vec::new();
    for (collection, specs) in &targets {
        let existing = crate::index::list_indexes(odm, collection).await?;
        let mut plan = plan_indexes(collection, specs, &existing);
        plan.series = plan_series(odm, collection).await?;
        planned.push(plan);
    }
    let validators = plan_validators(odm).await?;
    let sharding = plan_sharding(odm, &targets).await?;
    Ok(dry_run_report(&planned, &validators, &sharding))
}

/// The collection as listed by `listCollections`, if it exists.
async fn listed(odm: &Odm, collection: &str) -> Result<Option<Document>> {
    let reply = odm
        .own_database()
        .run_command(doc! { "listCollections": 1, "filter": { "name": collection } })
        .await
        .map_err(|e| Error::from_driver(collection, e))?;
    Ok(reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .ok()
        .and_then(|b| b.first())
        .and_then(Bson::as_document)
        .cloned())
}

/// For a collection declared a time-series collection: created as one when missing, and
/// refused by sync when it exists as another kind.
async fn plan_series(odm: &Odm, collection: &str) -> Result<Option<String>> {
    if odm.catalog().time_series(collection).is_none() {
        return Ok(None);
    }
    Ok(match listed(odm, collection).await? {
        None => Some("would create it as a time-series collection".to_owned()),
        Some(d) => match d.get_str("type").unwrap_or("collection") {
            "timeseries" => None,
            kind => Some(format!(
                "declared a time-series collection, found a {kind} (sync refuses it)"
            )),
        },
    })
}

/// The collections declared sharded, their keys, and what sync would do: shard them on a
/// `mongos` (one `hello` asks), nothing elsewhere.
async fn plan_sharding(
    odm: &Odm,
    targets: &[(String, Vec<crate::index::IndexSpec>)],
) -> Result<Vec<(String, String, bool)>> {
    let keyed: Vec<(String, String)> = targets
        .iter()
        .filter_map(|(c, _)| odm.catalog().shard_key_of(c).map(|k| (c.clone(), k.show())))
        .collect();
    if keyed.is_empty() {
        return Ok(Vec::new());
    }
    let hello = odm
        .own_database()
        .run_command(doc! { "hello": 1 })
        .await
        .map_err(|e| Error::from_driver("admin", e))?;
    let mongos = hello.get_str("msg").is_ok_and(|m| m == "isdbgrid");
    Ok(keyed.into_iter().map(|(c, k)| (c, k, mongos)).collect())
}

fn dry_run_report(
    planned: &[Planned],
    validators: &[(String, &'static str, Vec<String>)],
    sharding: &[(String, String, bool)],
) -> Report {
    let mut text = String::from("indexes (dry run: nothing is changed):\n");
    for p in planned {
        text.push_str(&format!("{}:\n", p.collection));
        for n in &p.to_create {
            text.push_str(&format!("  would create  {n}\n"));
        }
        for n in &p.unchanged {
            text.push_str(&format!("  unchanged     {n}\n"));
        }
        for (n, d) in &p.differing {
            text.push_str(&format!("  DIFFERS       {n} ({})\n", d.join("; ")));
        }
        for n in &p.extra {
            text.push_str(&format!(
                "  EXTRA         {n} (not declared by any model)\n"
            ));
        }
    }
    text.push_str("validators (dry run):\n");
    for (c, what, d) in validators {
        text.push_str(&format!("{c}: {what}\n"));
        for line in d {
            text.push_str(&format!("  {line}\n"));
        }
    }
    for (c, key, mongos) in sharding {
        if *mongos {
            text.push_str(&format!("{c}: would be sharded by {key}\n"));
        } else {
            text.push_str(&format!(
                "{c}: not sharded (key {key}): the server is not a mongos\n"
            ));
        }
    }
    let problems = planned.iter().any(|p| {
        !p.to_create.is_empty()
            || !p.differing.is_empty()
            || !p.extra.is_empty()
            || p.series.is_some()
    }) || validators.iter().any(|(_, what, _)| *what != "unchanged");
    let json = json!({
        "command": "sync",
        "dry_run": true,
        "in_sync": !problems,
        "indexes": planned.iter().map(|p| json!({
            "collection": p.collection,
            "to_create": p.to_create,
            "unchanged": p.unchanged,
            "differing": p.differing.iter().map(|(n, d)| json!({ "name": n, "differences": d })).collect::<Vec<_>>(),
            "extra": p.extra,
            "time_series": p.series,
        })).collect::<Vec<_>>(),
        "validators": validators.iter().map(|(c, what, d)| json!({
            "collection": c, "outcome": what.replace(' ', "_"), "differences": d,
        })).collect::<Vec<_>>(),
        "sharding": sharding.iter().map(|(c, k, mongos)| json!({
            "collection": c, "key": k, "to_shard": mongos,
        })).collect::<Vec<_>>(),
    });
    Report::new(text, json, problems)
}

/// What sync would do with one collection's indexes: each declared index found by name or by
/// keys, and compared on what `createIndexes` sets.
fn plan_indexes(
    collection: &str,
    specs: &[crate::index::IndexSpec],
    existing: &[Document],
) -> Planned {
    let mut out = Planned {
        collection: collection.to_owned(),
        ..Planned::default()
    };
    let mut matched = BTreeSet::new();
    for spec in specs {
        let declared = spec.to_document();
        let name = spec.name();
        let keys = normalized_keys(&declared);
        let found = existing
            .iter()
            .find(|e| e.get_str("name").ok() == Some(name.as_str()))
            .or_else(|| {
                existing
                    .iter()
                    .find(|e| e.get_str("name").ok() != Some("_id_") && normalized_keys(e) == keys)
            });
        let Some(found) = found else {
            out.to_create.push(name);
            continue;
        };
        let found_name = found.get_str("name").unwrap_or_default().to_owned();
        matched.insert(found_name.clone());
        let mut differences = Vec::new();
        if found_name != name {
            differences.push(format!("name: declared {name}, found {found_name}"));
        }
        if normalized_keys(found) != keys {
            differences.push(format!(
                "keys: declared {keys}, found {}",
                normalized_keys(found)
            ));
        }
        for option in [
            "unique",
            "sparse",
            "partialFilterExpression",
            "expireAfterSeconds",
        ] {
            let (a, b) = (option_of(&declared, option), option_of(found, option));
            if a != b {
                differences.push(format!("{option}: declared {a}, found {b}"));
            }
        }
        if differences.is_empty() {
            out.unchanged.push(name);
        } else {
            out.differing.push((name, differences));
        }
    }
    for e in existing {
        let name = e.get_str("name").unwrap_or_default();
        if name != "_id_" && !matched.contains(name) {
            out.extra.push(name.to_owned());
        }
    }
    out
}

/// An index's keys comparable with another's: directions as 1 / -1, a text index's fields
/// (from its `weights` when listed) sorted.
fn normalized_keys(index: &Document) -> String {
    let empty = Document::new();
    let key = index.get_document("key").unwrap_or(&empty);
    let mut parts = Vec::new();
    let mut text = BTreeSet::new();
    for (k, v) in key {
        match (k.as_str(), v) {
            ("_fts", _) => {
                if let Ok(w) = index.get_document("weights") {
                    text.extend(w.keys().cloned());
                }
            }
            ("_ftsx", _) => {}
            (_, Bson::String(s)) if s == "text" => {
                text.insert(k.clone());
            }
            (_, Bson::String(s)) => parts.push(format!("{k}: {s}")),
            (_, v) => {
                let negative = number(v).is_some_and(|n| n < 0.0);
                parts.push(format!("{k}: {}", if negative { "-1" } else { "1" }));
            }
        }
    }
    parts.extend(text.into_iter().map(|t| format!("{t}: \"text\"")));
    format!("{{ {} }}", parts.join(", "))
}

/// An index option as compared: booleans false when absent, numbers by value.
fn option_of(index: &Document, option: &str) -> String {
    match index.get(option) {
        None if option == "unique" || option == "sparse" => "false".to_owned(),
        None => "none".to_owned(),
        Some(v) => match number(v) {
            Some(n) => format!("{n}"),
            None => v.to_string(),
        },
    }
}

fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

/// What sync would do with each declared validator: `create` (no collection), `install` (no
/// validator), `unchanged`, or `differs` (with the paths that differ).
async fn plan_validators(odm: &Odm) -> Result<Vec<(String, &'static str, Vec<String>)>> {
    let mut targets: Vec<(String, Document)> = Vec::new();
    for e in odm.catalog().models() {
        if let Some(schema) = e.validator {
            if !targets.iter().any(|(c, _)| c == e.collection) {
                targets.push((
                    e.collection.to_owned(),
                    crate::validator::validator_of(schema),
                ));
            }
        }
    }
    targets.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for (collection, declared) in targets {
        let listed = listed(odm, &collection).await?;
        let Some(listed) = listed else {
            out.push((collection, "would create", Vec::new()));
            continue;
        };
        let found = listed
            .get_document("options")
            .and_then(|o| o.get_document("validator"))
            .ok()
            .filter(|v| !v.is_empty())
            .cloned();
        let Some(found) = found else {
            out.push((collection, "would install", Vec::new()));
            continue;
        };
        let mut differences = Vec::new();
        compare(
            "",
            &Bson::Document(declared),
            &Bson::Document(found),
            &mut differences,
        );
        let what = if differences.is_empty() {
            "unchanged"
        } else {
            "differs"
        };
        out.push((collection, what, differences));
    }
    Ok(out)
}

/// The paths where `declared` and `found` differ: keys in any order, numbers by value.
fn compare(path: &str, declared: &Bson, found: &Bson, out: &mut Vec<String>) {
    let at = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match (declared, found) {
        (Bson::Document(a), Bson::Document(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => compare(&at(k), x, y, out),
                    (Some(x), None) => out.push(format!("{}: declared {x}, found none", at(k))),
                    (None, Some(y)) => out.push(format!("{}: declared none, found {y}", at(k))),
                    (None, None) => {}
                }
            }
        }
        (Bson::Array(a), Bson::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(&at(&i.to_string()), x, y, out);
            }
        }
        (a, b) => {
            let same = match (number(a), number(b)) {
                (Some(x), Some(y)) => x == y,
                _ => a == b,
            };
            if !same {
                out.push(format!(
                    "{}: declared {a}, found {b}",
                    at("").trim_end_matches('.')
                ));
            }
        }
    }
}
