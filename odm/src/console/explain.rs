//! `explain`: the index use of every query shape odm generates, asked of the live database.

use bson::Bson;
use clap::Args;
use serde_json::{json, Value};

use super::report::{json_of, table, Report};
use crate::index::{Access, ExplainedShape, IndexState, ShapeReport};
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
        let fix = fix(s);
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

/// What a collection scan comes from, as the index list says: a declared index missing (a
/// sync creates it), differing, hidden, or there and not chosen by the planner; or none
/// declared.
fn fix(s: &ExplainedShape) -> String {
    let Some(name) = &s.declared else {
        return "no model declares an index for it".to_owned();
    };
    match &s.index {
        Some(IndexState::Missing) | None => {
            format!("index `{name}` is declared but missing: run `sync`")
        }
        Some(IndexState::Differs(how)) => format!(
            "index `{name}` exists but differs from its declaration ({}): `sync --replace-differing` rebuilds it",
            how.join("; ")
        ),
        Some(IndexState::Unchosen { hidden: true }) => {
            format!("index `{name}` exists but is hidden from the planner")
        }
        Some(IndexState::Unchosen { .. }) => format!(
            "index `{name}` exists and the planner did not choose it (plan: {})",
            s.stages.join(" > ")
        ),
    }
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
        "index": s.index.as_ref().map(|i| match i {
            IndexState::Missing => json!({ "state": "missing" }),
            IndexState::Differs(how) => json!({ "state": "differs", "differences": how }),
            IndexState::Unchosen { hidden } => json!({ "state": "unchosen", "hidden": hidden }),
        }),
        "problem": s.is_problem(),
        "sent_by": q.sources.iter().map(|f| json!({
            "feature": f.feature.name(), "model": f.model, "what": f.what,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{QueryShape, ShapeCommand};

    fn scanned(declared: Option<&str>, index: Option<IndexState>) -> ExplainedShape {
        ExplainedShape {
            shape: QueryShape {
                collection: "copies".into(),
                command: ShapeCommand::Update,
                shape: "{ book: { $in: [?] } }".into(),
                filter: bson::doc! {},
                sort: None,
                sources: Vec::new(),
            },
            access: Access::CollectionScan,
            stages: vec!["UPDATE".into(), "COLLSCAN".into()],
            declared: declared.map(str::to_owned),
            index,
        }
    }

    /// "Missing" only when the index list lacks it.
    #[test]
    fn a_scan_says_what_the_index_list_holds() {
        let fix = |index| fix(&scanned(Some("book_1"), index));
        assert_eq!(
            fix(Some(IndexState::Missing)),
            "index `book_1` is declared but missing: run `sync`"
        );
        assert_eq!(
            fix(Some(IndexState::Unchosen { hidden: false })),
            "index `book_1` exists and the planner did not choose it (plan: UPDATE > COLLSCAN)"
        );
        assert_eq!(
            fix(Some(IndexState::Unchosen { hidden: true })),
            "index `book_1` exists but is hidden from the planner"
        );
        assert!(fix(Some(IndexState::Differs(vec![
            "unique: declared true, found false".into()
        ])))
        .contains("differs from its declaration (unique: declared true, found false)"));
        assert_eq!(
            super::fix(&scanned(None, None)),
            "no model declares an index for it"
        );
    }
}
