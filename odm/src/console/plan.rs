//! `plan`, `routing` and `diagram`: views of the catalog, which send nothing.

use clap::Args;
use serde_json::{json, Value};

use super::report::Report;
use crate::catalog::Catalog;
use crate::denormalize::{cascade_plan_in, CascadePlan, SentBy};
use crate::shard::{RouteVerdict, RoutingReport};
use crate::{Error, Odm, Result};

/// The views of one model named to the console with its type.
#[derive(Debug, Clone, Copy)]
pub(super) struct Views {
    /// The model's name, as the command line names it.
    name: &'static str,
    /// Its cascade plan (none for the main side of a subset pair, named by its details).
    plan: Option<fn(&Catalog) -> CascadePlan>,
    routing: fn(&Catalog) -> RoutingReport,
}

fn short(type_name: &'static str) -> &'static str {
    type_name.rsplit("::").next().unwrap_or(type_name)
}

impl Views {
    pub(super) fn of<T: crate::Model>() -> Self {
        Views {
            name: short(std::any::type_name::<T>()),
            plan: Some(cascade_plan_in::<T>),
            routing: RoutingReport::in_catalog::<T>,
        }
    }

    pub(super) fn of_subset<D: crate::subset::Subset>() -> Self {
        Views {
            name: short(std::any::type_name::<D>()),
            plan: None,
            routing: RoutingReport::of_subset_in::<D>,
        }
    }
}

#[derive(Args, Debug)]
pub(super) struct PlanArgs {
    /// The models to show (by type name, `Part`); every model named to the console when none.
    models: Vec<String>,
}

/// The views asked for: every one, or those named (an unknown name is an error listing the
/// known ones).
fn chosen<'v>(views: &'v [Views], args: &PlanArgs) -> Result<Vec<&'v Views>> {
    if args.models.is_empty() {
        return Ok(views.iter().collect());
    }
    args.models
        .iter()
        .map(|m| {
            views.iter().find(|v| v.name == m).ok_or_else(|| {
                let known: Vec<&str> = views.iter().map(|v| v.name).collect();
                Error::Unsupported(format!(
                    "no model `{m}` was named to the console (known: {})",
                    if known.is_empty() {
                        "none; see `Console::model`".to_owned()
                    } else {
                        known.join(", ")
                    }
                ))
            })
        })
        .collect()
}

const NONE_NAMED: &str =
    "no model was named to the console: `Console::new(odm).model::<T>()` names one\n";

pub(super) fn plans(odm: &Odm, views: &[Views], args: &PlanArgs) -> Result<Report> {
    let mut text = String::new();
    let mut out = Vec::new();
    for v in chosen(views, args)? {
        let Some(plan) = v.plan else { continue };
        let plan = plan(odm.catalog());
        text.push_str(&plan.to_string());
        out.push(plan_json(v.name, &plan));
    }
    if views.is_empty() {
        text.push_str(NONE_NAMED);
    }
    let json = json!({ "command": "plan", "plans": out });
    Ok(Report::new(text, json, false))
}

fn verdict(v: &RouteVerdict) -> Value {
    match v {
        RouteVerdict::Routed { key } => json!({ "verdict": "routed", "key": key }),
        RouteVerdict::Scattered { key, missing } => {
            json!({ "verdict": "scattered", "key": key, "missing": missing })
        }
        _ => json!({ "verdict": "unsharded" }),
    }
}

fn plan_json(model: &str, plan: &CascadePlan) -> Value {
    json!({
        "model": model,
        "source": plan.source,
        "steps": plan.steps.iter().map(|s| json!({
            "field": s.field, "collection": s.collection, "model": s.model,
            "filter": s.filter, "update": s.update, "index": s.index,
            "commands": s.commands, "level": s.level, "copy_of": s.copy_of,
            "routing": verdict(&s.routing),
            "sent_by": match s.sent_by {
                SentBy::Worker => "worker",
                SentBy::Request => "request",
            },
            "walk": s.walk.as_ref().map(|w| json!({ "filter": w.filter, "index": w.index })),
        })).collect::<Vec<_>>(),
        "intents": plan.intents.iter().map(|i| json!({
            "field": i.field, "collection": i.collection, "filter": i.filter, "update": i.update,
        })).collect::<Vec<_>>(),
        "on_insert": plan.on_insert.iter().map(|c| json!({
            "collection": c.dependent, "path": c.path,
        })).collect::<Vec<_>>(),
        "cycle": plan.cycle,
    })
}

pub(super) fn routing(odm: &Odm, views: &[Views], args: &PlanArgs) -> Result<Report> {
    let mut text = String::new();
    let mut out = Vec::new();
    let mut scattered = 0;
    for v in chosen(views, args)? {
        let report = (v.routing)(odm.catalog());
        scattered += report.scattered().len();
        text.push_str(&report.to_string());
        out.push(json!({
            "model": report.model,
            "collection": report.collection,
            "key": report.key,
            "routes": report.routes.iter().map(|r| {
                let mut route = json!({
                    "operation": r.operation, "command": r.command,
                    "collection": r.collection, "named": r.named,
                });
                route["routing"] = verdict(&r.verdict);
                route
            }).collect::<Vec<_>>(),
        }));
    }
    if views.is_empty() {
        text.push_str(NONE_NAMED);
    }
    let json = json!({ "command": "routing", "scattered": scattered, "reports": out });
    Ok(Report::new(text, json, false))
}

pub(super) fn diagram(odm: &Odm) -> Report {
    let mermaid = odm.diagram();
    let json = json!({ "command": "diagram", "mermaid": mermaid });
    Report::new(mermaid, json, false)
}
