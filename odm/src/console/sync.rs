//! `sync`: indexes, validators and sharding, or with `--dry-run` what a sync would change.

use bson::Bson;
use clap::Args;
use serde_json::{json, Value};

use super::report::{json_of, Report};
use crate::index::{CollectionSync, SyncReport};
use crate::shard::ShardSync;
use crate::validator::{ValidatorOutcome, ValidatorReport};
use crate::{Odm, Result};

#[derive(Args, Debug)]
pub(super) struct SyncArgs {
    /// Only reads the database and prints what a sync would create and what differs; changes
    /// nothing. Exits 1 when anything would change or differs.
    #[arg(long)]
    dry_run: bool,
    /// Also drops the indexes no model declares (otherwise reported and kept).
    #[arg(long, conflicts_with = "dry_run")]
    drop_extra: bool,
    /// Also replaces the indexes and validators that differ from their declaration
    /// (otherwise reported and kept).
    #[arg(long, conflicts_with = "dry_run")]
    replace_differing: bool,
}

pub(super) async fn sync(odm: &Odm, args: &SyncArgs) -> Result<Report> {
    if args.dry_run {
        return super::dry_run::dry_run(odm).await;
    }
    let indexes = odm
        .sync_indexes()
        .drop_extra(args.drop_extra)
        .replace_differing(args.replace_differing)
        .await?;
    let validators = odm
        .sync_validators()
        .replace_differing(args.replace_differing)
        .await?;
    // What is left differing from the declarations after the sync.
    let left_index = indexes.collections.iter().any(|c| {
        c.differing.iter().any(|d| !d.replaced) || c.extra.iter().any(|e| !c.dropped.contains(e))
    });
    let left_validator = validators.collections.iter().any(|c| {
        matches!(
            c.outcome,
            ValidatorOutcome::Differs {
                replaced: false,
                ..
            }
        )
    });
    let problems = left_index || left_validator;
    let text = format!("indexes:\n{indexes}validators:\n{validators}");
    let json = json!({
        "command": "sync",
        "dry_run": false,
        "in_sync": indexes.is_in_sync() && validators.is_in_sync(),
        "indexes": indexes.collections.iter().map(index_json).collect::<Vec<_>>(),
        "validators": validators_json(&validators),
        "sharding": sharding_json(&indexes),
    });
    Ok(Report::new(text, json, problems))
}

fn index_json(c: &CollectionSync) -> Value {
    json!({
        "collection": c.collection,
        "created": c.created,
        "unchanged": c.unchanged,
        "differing": c.differing.iter().map(|d| json!({
            "name": d.name, "differences": d.differences, "replaced": d.replaced,
        })).collect::<Vec<_>>(),
        "extra": c.extra,
        "dropped": c.dropped,
        "failed": c.failed.iter().map(|f| json!({ "name": f.name, "message": f.message })).collect::<Vec<_>>(),
    })
}

fn validators_json(report: &ValidatorReport) -> Vec<Value> {
    report
        .collections
        .iter()
        .map(|c| match &c.outcome {
            ValidatorOutcome::Differs {
                differences,
                replaced,
            } => json!({
                "collection": c.collection, "outcome": "differs",
                "differences": differences, "replaced": replaced,
            }),
            other => json!({
                "collection": c.collection,
                "outcome": match other {
                    ValidatorOutcome::Created => "created",
                    ValidatorOutcome::Installed => "installed",
                    _ => "unchanged",
                },
            }),
        })
        .collect()
}

fn sharding_json(report: &SyncReport) -> Vec<Value> {
    report
        .sharding
        .iter()
        .map(|s| match s {
            ShardSync::Sharded { collection, key } => json!({
                "collection": collection, "key": json_of(&Bson::Document(key.clone())), "sharded": true,
            }),
            ShardSync::NotSharded {
                collection,
                key,
                reason,
            } => json!({
                "collection": collection, "key": json_of(&Bson::Document(key.clone())),
                "sharded": false, "reason": reason,
            }),
        })
        .collect()
}
