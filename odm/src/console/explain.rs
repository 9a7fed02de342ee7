//! `explain`: the index use of every query shape odm generates, asked of the live database.

use bson::Bson;
use clap::Args;
use serde_json::{json, Value};

use super::report::{json_of, table, Report};
use crate::index::{Access, ExplainedShape, ShapeReport};
use crate::{Odm, Result};

#[derive(Args, Debug)]
pub(super) struct ExplainArgs {
    /// Only the shapes sent by these models' operations or on their collections (by type
    /// name, `Part`); every shape when none is named.
    models: Vec<String>,
}

/// One `explain` per shape; exits 1 when a shape would scan a whole collection.
pub(super) async fn explain(odm: &Odm, args: &ExplainArgs) -> Result<Report> {
    let report = odm
        .explain_shapes()
        .models(args.models.iter().cloned())
        .await?;
    let problems = report.problems().count();
    let json = json!({
        "command": "explain",
        "clean": report.is_clean(),
        "problems": problems,
        "shapes": report.shapes.iter().map(shape_json).collect::<Vec<_>>(),
    });
    Ok(Report::new(text(&report), json, problems > 0))
}

/// The table, then a line per problem saying what would serve it, and one per shape the
/// server refused to explain.
fn text(report: &ShapeReport) -> String {
    let rows: Vec<Vec<String>> = report
        .shapes
        .iter()
        .map(|s| {
            let q = &s.shape;
            let by: Vec<&str> = q.sources.iter().map(|f| f.what.as_str()).collect();
            vec![
                q.collection.clone(),
                q.command.name().to_owned(),
                q.shape.clone(),
                stage(s),
                s.declared.clone().unwrap_or_else(|| "-".to_owned()),
                by.join("; "),
            ]
        })
        .collect();
    let header = [
        "collection",
        "command",
        "shape",
        "plan",
        "declared",
        "sent by",
    ];
    let mut out = table(&header, &rows);
    let problems: Vec<&ExplainedShape> = report.problems().collect();
    out.push_str(&format!(
        "\n{} query shapes, {} collection scans\n",
        report.shapes.len(),
        problems.len()
    ));
    for s in problems {
        let q = &s.shape;
        let fix = match &s.declared {
            Some(name) => format!("index `{name}` is declared but missing: run `sync`"),
            None => "no model declares an index for it".to_owned(),
        };
        out.push_str(&format!(
            "PROBLEM {} {} scans the collection: {fix}\n",
            q.collection, q.shape
        ));
    }
    for s in &report.shapes {
        if let Access::Refused(message) = &s.access {
            let q = &s.shape;
            out.push_str(&format!(
                "REFUSED {} {} {}: {message}\n",
                q.command.name(),
                q.collection,
                q.shape
            ));
        }
    }
    out
}

/// The plan in the table: `IXSCAN parts.id_1`, `COLLSCAN`, ...
fn stage(s: &ExplainedShape) -> String {
    match &s.access {
        Access::Refused(_) => "refused".to_owned(),
        other => other.to_string(),
    }
}

fn access_name(access: &Access) -> &'static str {
    match access {
        Access::Index(_) => "index",
        Access::CollectionScan => "collection scan",
        Access::NoCollection => "no collection",
        Access::Refused(_) => "refused",
        _ => "unreported",
    }
}

fn shape_json(s: &ExplainedShape) -> Value {
    let q = &s.shape;
    let (indexes, message) = match &s.access {
        Access::Index(names) => (names.clone(), None),
        Access::Refused(message) => (Vec::new(), Some(message.clone())),
        _ => (Vec::new(), None),
    };
    json!({
        "collection": q.collection,
        "command": q.command.name(),
        "shape": q.shape,
        "filter": json_of(&Bson::Document(q.filter.clone())),
        "sort": q.sort.as_ref().map(|s| json_of(&Bson::Document(s.clone()))),
        "access": access_name(&s.access),
        "indexes": indexes,
        "stages": s.stages,
        "refused": message,
        "declared": s.declared,
        "problem": s.is_problem(),
        "sent_by": q.sources.iter().map(|f| json!({
            "feature": f.feature.name(), "model": f.model, "what": f.what,
        })).collect::<Vec<_>>(),
    })
}
